//! From a request to its answer: which page or file, for which runs.

use super::files::{self, LiveState};
use super::page::{self, framed_report};
use crate::archive::{ArchiveError, RunStore};
use crate::http::{Request, Response, encode};
use crate::record::RunRecord;
use crate::report::{self, Options};

/// The most runs one compare, report or landscape page takes.
const MAX_RUNS: usize = 200;

pub fn answer(archive: &dyn RunStore, req: &Request) -> Response {
    let parts: Vec<&str> = req.path.trim_start_matches('/').split('/').collect();
    match parts.as_slice() {
        [""] => super::runs_page::page_of(archive),
        ["runs.json"] => runs_json(archive),
        ["runs", id] | ["runs", id, ""] => run_report(archive, id),
        // A shared store holds records, not folders: the record as stored, no interval file.
        ["runs", id, "run.json"] if archive.run_dir(id).is_none() => record_json(archive, id),
        ["runs", id, "run.json"] => with_run(archive, id, files::record),
        ["runs", id, "intervals.jsonl"] if archive.run_dir(id).is_none() => match load(archive, id)
        {
            Ok(_) => files::no_intervals(),
            Err(answer) => answer,
        },
        ["runs", id, "intervals.jsonl"] => {
            let from = req.param("from").and_then(|f| f.parse().ok()).unwrap_or(0);
            with_run(archive, id, |dir| files::intervals(dir, from))
        }
        ["live", id] if archive.run_dir(id).is_none() => match load(archive, id) {
            Ok(_) => super::live_page::page_of(id),
            Err(answer) => answer,
        },
        ["live", id] => with_run(archive, id, |_| super::live_page::page_of(id)),
        ["compare"] => compare(archive, req),
        ["report"] => report_of(archive, req),
        ["landscape"] => landscape_of(archive, req),
        ["favicon.ico"] => Response::new(404, "text/plain", Vec::new()),
        _ => page::problem(
            404,
            &format!("{}: no such page; the runs are at /", req.path),
        ),
    }
}

/// `f` on run `id`'s folder, or a 404 naming it.
fn with_run(
    archive: &dyn RunStore,
    id: &str,
    f: impl FnOnce(&std::path::Path) -> Response,
) -> Response {
    match archive.run_dir(id) {
        Some(dir) => f(&dir),
        None => page::problem(404, &format!("no run {id:?} in {}", archive.place())),
    }
}

/// A run's record from a store without folders, as JSON.
fn record_json(archive: &dyn RunStore, id: &str) -> Response {
    match load(archive, id) {
        Ok(r) => Response::new(
            200,
            "application/json",
            serde_json::to_vec_pretty(&r).unwrap_or_default(),
        ),
        Err(answer) => answer,
    }
}

/// The runs with where each stands, as JSON (what the runs page shows).
fn runs_json(archive: &dyn RunStore) -> Response {
    let runs = match archive.list(&super::runs_page::listing()) {
        Ok(r) => r,
        Err(e) => return page::problem(500, &e.to_string()),
    };
    let rows: Vec<serde_json::Value> = runs
        .iter()
        .map(|r| {
            let mut v = serde_json::to_value(r).unwrap_or_default();
            let state = archive.run_dir(&r.id).map(|d| LiveState::of(&d));
            if let serde_json::Value::Object(m) = &mut v {
                m.insert("live".into(), state_name(state).into());
            }
            v
        })
        .collect();
    let text = serde_json::to_string_pretty(&rows).unwrap_or_default();
    Response::new(200, "application/json", text).with_header("Cache-Control", "no-store")
}

pub fn state_name(state: Option<LiveState>) -> &'static str {
    match state {
        Some(LiveState::Ended) => "ended",
        Some(LiveState::Running) => "running",
        Some(LiveState::Stopped) => "stopped",
        Some(LiveState::Unknown) | None => "unknown",
    }
}

fn load(archive: &dyn RunStore, id: &str) -> Result<RunRecord, Response> {
    // A page names a run by its id (or `last`), never by a prefix or a tag.
    if crate::archive::last_of(id).is_none() && !plain_id(id) {
        return Err(page::problem(
            404,
            &format!("no run {id:?} in {}", archive.place()),
        ));
    }
    archive.load(id).map_err(|e| match e {
        ArchiveError::NotFound(_) | ArchiveError::Empty | ArchiveError::Ambiguous { .. } => {
            page::problem(404, &format!("no run {id:?} in {}", archive.place()))
        }
        e => page::problem(500, &e.to_string()),
    })
}

/// Whether `id` reads as a run's id: a digit first, then letters, digits, '-', '_', '.'.
fn plain_id(id: &str) -> bool {
    id.starts_with(|c: char| c.is_ascii_digit())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The names the user gave runs, by run id (reports' legends use them).
fn names(archive: &dyn RunStore) -> std::collections::BTreeMap<String, String> {
    let mut names = std::collections::BTreeMap::new();
    for (tag, id) in archive.tags().unwrap_or_default() {
        names
            .entry(id)
            .and_modify(|n: &mut String| {
                n.push_str(", ");
                n.push_str(&tag)
            })
            .or_insert(tag);
    }
    names
}

fn run_report(archive: &dyn RunStore, id: &str) -> Response {
    let record = match load(archive, id) {
        Ok(r) => r,
        Err(answer) => return answer,
    };
    let options = Options {
        names: names(archive),
        ..Default::default()
    };
    let html = report::to_html(std::slice::from_ref(&record), &options);
    let id = encode(&record.id);
    framed_report(
        html,
        &format!("run {}", record.id),
        &[
            ("live", format!("/live/{id}")),
            ("run.json", format!("/runs/{id}/run.json")),
            ("intervals", format!("/runs/{id}/intervals.jsonl")),
        ],
    )
}

/// The runs `?runs=A,B,...` names, in that order.
fn picked(archive: &dyn RunStore, req: &Request) -> Result<Vec<RunRecord>, Response> {
    let ids: Vec<&str> = req
        .param("runs")
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if ids.len() > MAX_RUNS {
        return Err(page::problem(
            400,
            &format!("{} runs picked; a page takes at most {MAX_RUNS}", ids.len()),
        ));
    }
    ids.iter().map(|id| load(archive, id)).collect()
}

/// `/compare?runs=BASELINE,CANDIDATE...[&noise=2]`: what `perflab compare -o` writes.
fn compare(archive: &dyn RunStore, req: &Request) -> Response {
    let records = match picked(archive, req) {
        Ok(r) if r.len() >= 2 => r,
        Ok(_) => {
            return page::problem(
                400,
                "compare takes two runs or more: /compare?runs=BASELINE,CANDIDATE (pick them on the runs page)",
            );
        }
        Err(answer) => return answer,
    };
    let noise = match req
        .param("noise")
        .map(|n| n.trim_end_matches('%').parse::<f64>())
    {
        None => 0.02,
        Some(Ok(n)) if (0.0..=50.0).contains(&n) => n / 100.0,
        Some(_) => return page::problem(400, "noise is a percentage from 0 to 50, e.g. noise=2"),
    };
    let options = crate::compare::Options {
        noise,
        expect: None,
    };
    let comparison = crate::compare::compare(&records, &options);
    let report_options = Options {
        comparison: Some(comparison),
        names: names(archive),
        ..Default::default()
    };
    let ids: Vec<&str> = records.iter().map(|r| r.id.as_str()).collect();
    framed_report(
        report::to_html(&records, &report_options),
        &format!("compare {}", ids.join(" ")),
        &[],
    )
}

/// `/report?runs=A,B,...`: one report of them, as `perflab report A B` writes it.
fn report_of(archive: &dyn RunStore, req: &Request) -> Response {
    let records = match picked(archive, req) {
        Ok(r) if !r.is_empty() => r,
        Ok(_) => return page::problem(400, "report takes runs: /report?runs=A,B"),
        Err(answer) => return answer,
    };
    let options = Options {
        names: names(archive),
        ..Default::default()
    };
    framed_report(
        report::to_html(&records, &options),
        &format!("report of {} runs", records.len()),
        &[],
    )
}

/// `/landscape[?runs=A,B,...]`: the landscape table of those runs, or of every run (the
/// newest [`MAX_RUNS`]).
fn landscape_of(archive: &dyn RunStore, req: &Request) -> Response {
    let records = if req.param("runs").is_some() {
        match picked(archive, req) {
            Ok(r) => r,
            Err(answer) => return answer,
        }
    } else {
        match archive.load_newest(MAX_RUNS) {
            Ok(all) => all,
            Err(e) => return page::problem(500, &e.to_string()),
        }
    };
    if records.is_empty() {
        return page::problem(
            400,
            "no runs to rank: record some, or name them: /landscape?runs=A,B",
        );
    }
    landscape(&records)
}

/// The landscape table alone, each run linked to its report.
fn landscape(records: &[RunRecord]) -> Response {
    let (table, note) = report::landscape::table(records);
    let doc = report::Document {
        title: "Landscape".into(),
        subtitle: format!(
            "{} runs, ranked by their best headline figure within each figure",
            records.len()
        ),
        sections: vec![report::Section {
            id: "landscape".into(),
            title: "Runs ranked".into(),
            blocks: [
                Some(report::Block::Table(table)),
                note.map(report::Block::Paragraph),
            ]
            .into_iter()
            .flatten()
            .collect(),
        }],
    };
    let mut html = report::html::render(&doc);
    // Run ids in the table become links to their reports.
    for r in records {
        let cell = format!(">{}</td>", report::html::escape(&r.id));
        let link = format!(
            "><a href=\"/runs/{}\">{}</a></td>",
            encode(&r.id),
            report::html::escape(&r.id)
        );
        html = html.replace(&cell, &link);
    }
    framed_report(html, "landscape", &[])
}
