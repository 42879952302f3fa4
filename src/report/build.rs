//! What a report says about each run: its findings (peak, sweet spot, knees, scalability fit),
//! its charts, its tables, its warnings and its disclosure. Several runs get a cover first: a
//! line per run (the balance sheet's rules of thumb) and, when asked, the landscape.

use super::{Block, Document, Options, Section, Table, figures, landscape};
use crate::analysis::{self, curve};
use crate::record::{Analysis, RunRecord};
use crate::view::about::{cluster_line, cut_short_line, describe_spec};
use crate::view::names::step_params;
use crate::view::{balance, checks, disclosure, findings, levels, resources, steps};
use crate::workload::kind;

/// Warnings listed per run; a 1,000-step run on a busy host can have one per step.
const MAX_WARNINGS: usize = 12;

/// The document for `records`, in the order given.
pub fn document(records: &[RunRecord], options: &Options) -> Document {
    let mut sections = Vec::new();
    if let Some(a) = &options.study {
        sections.extend(super::study::sections(a));
    }
    if let Some(c) = &options.comparison {
        sections.extend(super::comparison::sections(c, records, &options.names));
    }
    if records.len() > 1 || options.landscape {
        sections.push(cover(records, options));
    }
    let shared = shared_machine(records) && sections.iter().any(|s| s.id == "summary");
    sections.extend(records.iter().map(|r| run_section(r, options, shared)));
    Document {
        title: options
            .title
            .clone()
            .unwrap_or_else(|| title(records, options)),
        subtitle: subtitle(records),
        sections,
    }
}

fn title(records: &[RunRecord], options: &Options) -> String {
    if let Some(a) = &options.study {
        return format!("perflab study {}: {}", a.name, a.title);
    }
    if options.comparison.is_some()
        && let [baseline, rest @ ..] = records
    {
        let named = |id: &str| super::comparison::named(id, &options.names);
        let ids: Vec<String> = rest.iter().map(|r| named(&r.id)).collect();
        return format!(
            "perflab comparison: {} against {}",
            ids.join(", "),
            named(&baseline.id)
        );
    }
    match records {
        [] => "perflab report".into(),
        [r] => format!("perflab report: {} run {}", r.workload, r.id),
        [first, ..] => match &first.suite {
            Some(s) if records.iter().all(|r| r.suite.as_ref() == Some(s)) => {
                format!("perflab report: the {s} suite")
            }
            _ => format!("perflab report: {} runs", records.len()),
        },
    }
}

/// The machine(s) and the time span the runs cover.
fn subtitle(records: &[RunRecord]) -> String {
    let mut machines: Vec<String> = Vec::new();
    for r in records {
        let m = machine(r);
        if !machines.contains(&m) {
            machines.push(m);
        }
    }
    let first = records.iter().map(|r| r.started_at.as_str()).min();
    let last = records.iter().map(|r| r.started_at.as_str()).max();
    let when = match (first, last) {
        (Some(a), Some(b)) if a == b => format!("run {}", short_time(a)),
        (Some(a), Some(b)) => format!("runs from {} to {}", short_time(a), short_time(b)),
        _ => "no runs".into(),
    };
    format!("{} · {when}", machines.join("; "))
}

fn short_time(t: &str) -> String {
    t.get(..16).unwrap_or(t).replace('T', " ")
}

fn machine(r: &RunRecord) -> String {
    let cpu = &r.env.cpu;
    format!(
        "{}{}, {} CPUs, {}",
        r.env
            .hostname
            .as_ref()
            .map(|h| format!("{h}: "))
            .unwrap_or_default(),
        cpu.model.clone().unwrap_or_else(|| "unknown CPU".into()),
        cpu.logical_cpus.map_or("?".into(), |n| n.to_string()),
        r.env
            .memory
            .total_bytes
            .map(crate::vocab::units::format_bytes)
            .unwrap_or_else(|| "unknown memory".into())
    )
}

fn cover(records: &[RunRecord], options: &Options) -> Section {
    let mut blocks = Vec::new();
    let lines: Vec<String> = balance::lines(records);
    if !lines.is_empty() {
        blocks.push(Block::Heading("Rules of thumb".into()));
        blocks.push(Block::Findings(lines));
    }
    // Runs of different workloads (a suite) rank nothing against each other: their landscape
    // only when asked.
    let one_workload = records.windows(2).all(|w| w[0].workload == w[1].workload);
    if options.landscape || (records.len() > 1 && one_workload) {
        let (t, note) = landscape::table(records);
        blocks.push(Block::Table(t));
        if let Some(n) = note {
            blocks.push(Block::Paragraph(n));
        }
    }
    if shared_machine(records) {
        blocks.push(Block::Paragraph(
            "Every run was measured on this machine, with this build of perflab:".into(),
        ));
        blocks.push(Block::Table(disclosure(&records[0])));
    }
    Section {
        id: "summary".into(),
        title: "Summary".into(),
        blocks,
    }
}

/// Whether every run has the same disclosure (but for what moves on its own) and tool, so
/// the cover shows it once instead of once per run.
fn shared_machine(records: &[RunRecord]) -> bool {
    let fingerprint = |r: &RunRecord| {
        let v = serde_json::to_value(&r.env).unwrap_or_default();
        let mut flat: Vec<(String, String)> = crate::compare::diff::flatten(&v)
            .into_iter()
            .filter(|(k, _)| !crate::compare::diff::VOLATILE.contains(&format!("env.{k}").as_str()))
            .collect();
        flat.push((
            "tool".into(),
            format!("{} {}", r.tool.version, r.tool.profile),
        ));
        flat
    };
    records.len() > 1
        && records
            .windows(2)
            .all(|w| fingerprint(&w[0]) == fingerprint(&w[1]))
}

/// The analysis a report shows: recomputed from the steps (old records have none, and the
/// objective is the report's), so every record re-renders with today's rules.
pub fn analysis(r: &RunRecord, options: &Options) -> Analysis {
    let axes = crate::workload::kind::axes_of(r);
    let mut a = analysis::analyze(&r.steps, &r.headline, &axes);
    a.curves = curve::analyze_curves(&r.steps, &r.headline, options.slo.as_ref(), &axes);
    a
}

/// What a run says about `--slo`, always: held at every step, broken at some (which), or
/// not decidable (no step timed its ops), and whether the highest throughput within it
/// could be found (a curve of three steps or more).
fn slo_line(r: &RunRecord, slo: &crate::vocab::Slo, a: &Analysis) -> String {
    let figure = slo.figure.as_str();
    let measured: Vec<(String, f64)> = r
        .steps
        .iter()
        .map(|s| {
            let label = kind::label_in_kind(r, &step_params(s));
            (label, curve::step_latency(s, slo))
        })
        .filter(|(_, v)| v.is_finite() && *v > 0.0)
        .collect();
    let ns = crate::vocab::numbers::ns;
    if measured.is_empty() {
        return format!(
            "SLO {}: not decidable: no step recorded its ops' {figure} response time",
            slo.label()
        );
    }
    let broken: Vec<&(String, f64)> = measured
        .iter()
        .filter(|(_, v)| *v >= slo.limit_ns)
        .collect();
    let named = |(label, v): &(String, f64)| match label.is_empty() {
        true => format!("{figure} {}", ns(*v)),
        false => format!("{label} ({figure} {})", ns(*v)),
    };
    let verdict = match broken.len() {
        0 => {
            let worst = measured
                .iter()
                .max_by(|x, y| x.1.total_cmp(&y.1))
                .expect("not empty");
            format!("held at every step; the highest is {}", named(worst))
        }
        n if n == measured.len() => {
            let best = measured
                .iter()
                .min_by(|x, y| x.1.total_cmp(&y.1))
                .expect("not empty");
            format!("broken at every step; the lowest is {}", named(best))
        }
        n => {
            let shown: Vec<String> = broken.iter().take(3).map(|b| named(b)).collect();
            format!(
                "held at {} of {} steps, broken at {}{}",
                measured.len() - n,
                measured.len(),
                shown.join(", "),
                if n > 3 {
                    format!(" and {} more", n - 3)
                } else {
                    String::new()
                }
            )
        }
    };
    let knee = match a.curves.iter().any(|c| c.slo.is_some()) {
        true => "",
        false => "; the highest throughput within it needs a load curve of three steps or more",
    };
    format!("SLO {}: {verdict}{knee}", slo.label())
}

fn run_section(r: &RunRecord, options: &Options, shared: bool) -> Section {
    let a = analysis(r, options);
    let mut blocks = Vec::new();
    blocks.push(Block::Paragraph(format!(
        "{} · target {} · {} · started {} · {}",
        r.workload,
        r.target,
        describe_spec(&r.spec),
        short_time(&r.started_at),
        r.status.as_str()
    )));
    blocks.push(Block::Paragraph(format!("$ {}", r.command.join(" "))));
    let mut found = kind::of(r).map(|k| k.findings(r)).unwrap_or_default();
    found.extend(findings::findings(r, &a));
    if let Some(slo) = &options.slo {
        found.push(slo_line(r, slo, &a));
    }
    if !found.is_empty() {
        blocks.push(Block::Findings(found));
    }
    let mut warnings: Vec<String> = Vec::new();
    if let Some(c) = &r.cut_short {
        warnings.push(cut_short_line(c));
    }
    for w in &r.warnings {
        if !warnings.contains(&w.message) {
            warnings.push(w.message.clone());
        }
    }
    if r.tool.profile == "debug" {
        warnings.push("measured by a debug build of perflab: figures are not comparable".into());
    }
    if warnings.len() > MAX_WARNINGS {
        let more = warnings.len() - MAX_WARNINGS;
        warnings.truncate(MAX_WARNINGS);
        warnings.push(format!(
            "... and {more} more ('perflab show {}' lists them all)",
            r.id
        ));
    }
    if !warnings.is_empty() {
        blocks.push(Block::Warnings(warnings));
    }
    if r.steps.is_empty() {
        blocks.push(Block::Paragraph("No step finished.".into()));
    } else {
        blocks.extend(
            figures::for_run(r, &a, options)
                .into_iter()
                .map(Block::Figure),
        );
        blocks.push(Block::Table(Table::from_ui(
            Some("steps".into()),
            &steps::steps_table(r),
        )));
        for (title, t) in kind::tables_of(r) {
            blocks.push(Block::Table(Table::from_ui(Some(title), &t)));
        }
        if let Some((title, t, overall)) = levels::table(r) {
            blocks.push(Block::Table(Table::from_ui(Some(title), &t)));
            blocks.push(Block::Findings(vec![overall]));
        }
        if let Some((t, limits)) = resources::table(r) {
            let title = resources::TITLE.to_string();
            blocks.push(Block::Table(Table::from_ui(Some(title), &t)));
            blocks.push(Block::Findings(limits));
        }
        if let Some(t) = usl_table(r, &a) {
            blocks.push(Block::Table(t));
        }
        let checked = checks::check_lines(r);
        if !checked.is_empty() {
            blocks.push(Block::Findings(checked));
        }
    }
    if let Some(t) = settings_table(r) {
        blocks.push(Block::Table(t));
    }
    if !shared {
        blocks.push(Block::Table(disclosure(r)));
    }
    blocks.push(Block::Details {
        summary: "the exact specification (JSON)".into(),
        text: serde_json::to_string_pretty(&r.spec).unwrap_or_default(),
    });
    Section {
        id: format!("run-{}", r.id),
        title: format!(
            "{} · {}{}",
            r.workload,
            r.id,
            if r.status.as_str() == "complete" {
                String::new()
            } else {
                format!(" ({})", r.status.as_str())
            }
        ),
        blocks,
    }
}

/// The scalability fit of every curve that has one, as a table.
fn usl_table(r: &RunRecord, a: &Analysis) -> Option<Table> {
    let fits: Vec<_> = a
        .curves
        .iter()
        .filter_map(|c| c.usl.as_ref().map(|u| (c, u)))
        .collect();
    if fits.is_empty() {
        return None;
    }
    let m = |v: f64| crate::vocab::numbers::metric(&r.headline.metric, v);
    let ci = |c: Option<[f64; 2]>, f: &dyn Fn(f64) -> String| {
        c.map(|[lo, hi]| format!("{} – {}", f(lo), f(hi)))
            .unwrap_or_else(|| "-".into())
    };
    let g = |v: f64| format!("{v:.4}");
    let k = |v: f64| format!("{v:.2e}");
    let mut t = Table {
        caption: Some("Universal Scalability Law fits: X(N) = γN / (1 + σ(N−1) + κN(N−1))".into()),
        head: [
            "curve", "σ", "95%", "κ", "95%", "γ", "95%", "R²", "peak N*", "X(N*)", "note",
        ]
        .map(String::from)
        .to_vec(),
        rows: Vec::new(),
    };
    for (c, u) in fits {
        t.rows.push(vec![
            if c.label.is_empty() {
                c.x.clone()
            } else {
                format!("{} ({})", c.x, c.label)
            },
            g(u.sigma),
            ci(u.sigma_ci95, &g),
            k(u.kappa),
            ci(u.kappa_ci95, &k),
            m(u.gamma),
            ci(u.gamma_ci95, &m),
            format!("{:.3}", u.r_squared),
            u.peak_n.map_or("-".into(), |n| format!("{n:.1}")),
            u.peak_throughput.map_or("-".into(), m),
            if u.peak_extrapolated {
                "peak extrapolated".into()
            } else {
                u.warnings.join("; ")
            },
        ]);
    }
    Some(t)
}

/// What defines the run (its kind's settings) and every setting of the server it reported
/// (`spec.server_settings`: a database's version, durability and memory), for the run's own
/// disclosure.
fn settings_table(r: &RunRecord) -> Option<Table> {
    let mut rows: Vec<Vec<String>> = r
        .settings
        .iter()
        .map(|s| vec!["run".to_string(), s.name.clone(), s.value.clone()])
        .collect();
    if let Some(server) = r.spec.get("server_settings").and_then(|v| v.as_object()) {
        for (k, v) in server {
            let value = v.as_str().map_or_else(|| v.to_string(), String::from);
            if !r.settings.iter().any(|s| s.name == *k && s.value == value) {
                rows.push(vec!["server".to_string(), k.clone(), value]);
            }
        }
    }
    (!rows.is_empty()).then(|| Table {
        caption: Some("settings: what defines the run, and the server's own".into()),
        head: ["part", "setting", "value"].map(String::from).to_vec(),
        rows,
    })
}

/// The machine and tool the run was measured with, as `perflab sysinfo` shows them.
fn disclosure(r: &RunRecord) -> Table {
    let mut rows = vec![vec![
        "perflab".to_string(),
        "version".to_string(),
        format!("{} ({} build)", r.tool.version, r.tool.profile),
    ]];
    for (heading, lines) in disclosure::sections(&r.env) {
        // The load at the time is in the run's warnings when it mattered.
        for (k, v) in lines {
            rows.push(vec![heading.to_string(), k, v]);
        }
    }
    // Under MPI, the ranks, and every other host's machine (rank 0's is the one above).
    if let Some(line) = cluster_line(r) {
        rows.push(vec!["MPI".into(), "ranks".into(), line]);
    }
    for m in r.cluster.iter().flat_map(|c| &c.members) {
        let Some(env) = &m.env else { continue };
        for (heading, lines) in disclosure::sections(env) {
            for (k, v) in lines {
                rows.push(vec![
                    format!("rank {} ({}): {heading}", m.rank, m.host),
                    k,
                    v,
                ]);
            }
        }
    }
    Table {
        caption: Some("disclosure".into()),
        head: ["part", "item", "value"].map(String::from).to_vec(),
        rows,
    }
}
