//! What the archive keeps of a study invocation besides its runs, in perflab's own folder
//! `studies/RUN/` of the results folder: the study file as it was run and how it was run
//! (`invocation.json`: the flags, each leg's command line, the legs not run here and the legs
//! attached from elsewhere). From these and the runs tagged with the invocation, a study's
//! answer is worked out again at any time ([`report_of`]), and `--resume` finds the legs
//! already done ([`resumed`]).

use super::Study;
use super::evaluate::{self, Inputs, Outcome};
use super::file::{self, Origin};
use crate::archive::Archive;
use crate::error::AppError;
use crate::record::{RunRecord, Status, StudyRef};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// What the archive keeps beside a study invocation's runs, so that its report can be
/// written again later: the file, and how it was run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Invocation {
    pub name: String,
    pub quick: bool,
    pub overrides: Vec<String>,
    /// Leg → the command line it ran (or, run elsewhere, would run).
    pub commands: BTreeMap<String, String>,
    /// Leg → why it did not run here.
    pub not_run: BTreeMap<String, String>,
    /// Leg → the run that stands for it, made elsewhere and imported (`import --study --leg`).
    #[serde(default)]
    pub attached: BTreeMap<String, String>,
}

/// The last invocation of the study with the same file and flags, and its complete legs.
pub fn resumed(
    archive: &Archive,
    study: &Study,
    digest: &str,
) -> Result<(String, BTreeMap<String, RunRecord>), AppError> {
    let mut done = BTreeMap::new();
    let mine = study_runs(archive, &study.name)?;
    let Some((run, records)) = mine.into_iter().rev().find(|(_, rs)| {
        rs.iter()
            .any(|r| r.study.as_ref().is_some_and(|s| s.digest == digest))
    }) else {
        return Ok((
            crate::record::timestamp::run_id(std::time::SystemTime::now()),
            done,
        ));
    };
    for r in records {
        // A leg whose checks failed is not done: --resume runs it again.
        if r.status == Status::Complete
            && crate::workload::kind::failure_of(&r).is_none()
            && let Some(s) = &r.study
            && s.digest == digest
        {
            done.insert(s.leg.clone(), r);
        }
    }
    Ok((run, done))
}

pub fn invocation_path(archive: &Archive, run: &str) -> PathBuf {
    archive.root().join("studies").join(run)
}

/// Keeps the study file and how it was run beside the runs (perflab's own folder).
pub fn save_invocation(
    archive: &Archive,
    run: &str,
    study: &Study,
    inv: &Invocation,
) -> Result<(), AppError> {
    let dir = invocation_path(archive, run);
    let err = |e: std::io::Error| AppError::Output(format!("{}: {e}", dir.display()));
    std::fs::create_dir_all(&dir).map_err(err)?;
    std::fs::write(dir.join("study.toml"), &study.text).map_err(err)?;
    // A --resume keeps the legs imported from elsewhere.
    let mut inv = inv.clone();
    if let Some(before) = std::fs::read_to_string(dir.join("invocation.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Invocation>(&t).ok())
    {
        inv.attached = before.attached;
    }
    let json = serde_json::to_string_pretty(&inv).map_err(|e| AppError::Output(e.to_string()))?;
    std::fs::write(dir.join("invocation.json"), json).map_err(err)
}

/// Every invocation of study `name` in the archive, oldest first, with its runs.
pub fn study_runs(
    archive: &Archive,
    name: &str,
) -> Result<Vec<(String, Vec<RunRecord>)>, AppError> {
    let mut by_run: BTreeMap<String, Vec<RunRecord>> = BTreeMap::new();
    for s in archive.list()? {
        let Ok(r) = archive.load(&s.id) else { continue };
        if let Some(st) = &r.study
            && st.name == name
        {
            by_run.entry(st.run.clone()).or_default().push(r);
        }
    }
    Ok(by_run.into_iter().collect())
}

/// The run a `--study RUN` option names: `last` is the newest run made by a study (not the
/// newest run, which may be a record imported since), anything else as any run query.
pub fn study_run(archive: &Archive, query: &str) -> Result<RunRecord, AppError> {
    if query.trim() != "last" {
        return Ok(archive.load(query)?);
    }
    for row in archive.list()?.iter().rev() {
        if let Ok(r) = archive.load(&row.id)
            && r.study.is_some()
        {
            return Ok(r);
        }
    }
    Err(AppError::Usage(
        "no run here was made by a study; run one first (perflab study NAME)".into(),
    ))
}

/// Makes imported run `id` stand for leg `leg` of the study invocation that run `study`
/// belongs to (the record stays as it was made; the invocation's folder notes it). Returns
/// the study's name.
pub fn attach(archive: &Archive, study: &str, leg: &str, id: &str) -> Result<String, AppError> {
    let r = archive.load(study)?;
    // An imported record that was a leg elsewhere names its own study invocation; only a
    // study invocation of this archive has the folder to attach to.
    let Some(sref) = r.study.clone() else {
        return Err(AppError::Usage(format!(
            "run {} was not started by a study; --study names a run of one (e.g. last)",
            r.id
        )));
    };
    let dir = invocation_path(archive, &sref.run);
    let text = std::fs::read_to_string(dir.join("study.toml")).map_err(|e| {
        AppError::Usage(format!(
            "study run {}: its folder {} cannot be read ({e})",
            sref.run,
            dir.display()
        ))
    })?;
    let s = file::parse(
        &text,
        &Origin {
            name: &sref.name,
            label: &dir.join("study.toml").display().to_string(),
        },
    )
    .map_err(AppError::Usage)?;
    if s.leg(leg).is_none() {
        return Err(AppError::Usage(format!(
            "study {} has no leg {leg:?}; its legs are {}",
            s.name,
            s.leg_names()
        )));
    }
    let path = dir.join("invocation.json");
    let mut inv: Invocation = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    inv.attached.insert(leg.to_string(), id.to_string());
    archive.tag(id, &format!("{}.{leg}", s.name))?;
    let json = serde_json::to_string_pretty(&inv).map_err(|e| AppError::Output(e.to_string()))?;
    std::fs::write(&path, json)
        .map_err(|e| AppError::Output(format!("{}: {e}", path.display())))?;
    Ok(s.name)
}

/// The runs of the study invocation `record` belongs to, and the study's answer over them:
/// what `perflab report --study RUN` shows.
pub fn report_of(
    archive: &Archive,
    record: &RunRecord,
) -> Result<(Vec<RunRecord>, Outcome), AppError> {
    let Some(sref) = record.study.clone() else {
        return Err(AppError::Usage(format!(
            "run {} was not started by a study ('perflab study'); name its runs instead",
            record.id
        )));
    };
    let records: Vec<RunRecord> = study_runs(archive, &sref.name)?
        .into_iter()
        .find(|(run, _)| *run == sref.run)
        .map(|(_, rs)| rs)
        .unwrap_or_default();
    let dir = invocation_path(archive, &sref.run);
    let study = match std::fs::read_to_string(dir.join("study.toml")) {
        Ok(text) => file::parse(
            &text,
            &Origin {
                name: &sref.name,
                label: &dir.join("study.toml").display().to_string(),
            },
        )
        .map_err(AppError::Usage)?,
        // Imported from another machine without its study folder: the built-in one.
        Err(_) => super::load(&sref.name)?,
    };
    let mut inv: Invocation = std::fs::read_to_string(dir.join("invocation.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let mut records = records;
    // Legs run elsewhere and imported: their records, as they are, stand for the leg.
    for (leg, id) in &inv.attached {
        let mut r = archive.load(id)?;
        r.study = Some(StudyRef {
            leg: leg.clone(),
            ..sref.clone()
        });
        inv.not_run.remove(leg);
        records.push(r);
    }
    let answer = evaluate::evaluate(
        &study,
        &Inputs {
            run: sref.run.clone(),
            quick: inv.quick,
            records: &records,
            commands: inv.commands,
            not_run: inv.not_run,
        },
    );
    Ok((records, answer))
}

#[cfg(test)]
mod tests {
    use super::*;

    const STUDY: &str = r#"
[study]
title = "two legs"

[defaults]
command = "null"
duration = "100ms"

[[leg]]
name = "one"

[[leg]]
name = "two"
"#;

    fn archive(name: &str) -> (Archive, PathBuf) {
        let dir = std::env::temp_dir().join(format!("perflab-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        (Archive::open(Some(&dir)).unwrap(), dir)
    }

    fn study() -> Study {
        file::parse(
            STUDY,
            &Origin {
                name: "pair",
                label: "pair.toml",
            },
        )
        .unwrap()
    }

    /// A leg's record, as a study run stamps it.
    fn leg_run(id: &str, leg: &str, run: &str, digest: &str, status: Status) -> RunRecord {
        RunRecord {
            id: id.into(),
            workload: "null".into(),
            status,
            study: Some(StudyRef {
                name: "pair".into(),
                leg: leg.into(),
                run: run.into(),
                digest: digest.into(),
            }),
            ..Default::default()
        }
    }

    #[test]
    fn an_invocation_is_kept_and_its_answer_worked_out_again() {
        let (a, dir) = archive("answer");
        let s = study();
        let inv = Invocation {
            name: "pair".into(),
            commands: [
                ("one".to_string(), "perflab null".to_string()),
                ("two".to_string(), "perflab null".to_string()),
            ]
            .into(),
            not_run: [("two".to_string(), "not chosen (--leg)".to_string())].into(),
            ..Default::default()
        };
        save_invocation(&a, "20260101-000000-aaaa", &s, &inv).unwrap();
        let dir_of = invocation_path(&a, "20260101-000000-aaaa");
        assert_eq!(
            std::fs::read_to_string(dir_of.join("study.toml")).unwrap(),
            STUDY
        );
        let r = leg_run(
            "20260101-000001-bbbb",
            "one",
            "20260101-000000-aaaa",
            "d",
            Status::Complete,
        );
        a.save(&r).unwrap();
        let (records, answer) = report_of(&a, &r).unwrap();
        assert_eq!(records.len(), 1);
        assert_eq!(answer.legs.len(), 2);
        assert!(matches!(
            &answer.legs[1].state,
            evaluate::LegState::NotRun(why) if why == "not chosen (--leg)"
        ));
        // `last` is the newest run a study made.
        assert_eq!(study_run(&a, "last").unwrap().id, r.id);
        // A run no study made has no study answer.
        let plain = RunRecord {
            id: "20260101-000002-cccc".into(),
            workload: "null".into(),
            ..Default::default()
        };
        assert_eq!(report_of(&a, &plain).unwrap_err().exit_code(), 2);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn resume_takes_the_complete_legs_of_the_same_file_and_flags_only() {
        let (a, dir) = archive("resume");
        let s = study();
        let run = "20260101-000000-aaaa";
        for r in [
            leg_run("20260101-000001-bbbb", "one", run, "same", Status::Complete),
            leg_run("20260101-000002-cccc", "two", run, "same", Status::Failed),
        ] {
            a.save(&r).unwrap();
        }
        let (found, done) = resumed(&a, &s, "same").unwrap();
        assert_eq!(found, run);
        assert_eq!(done.keys().collect::<Vec<_>>(), ["one"]);
        // Other flags: a new invocation, nothing done.
        let (fresh, done) = resumed(&a, &s, "other").unwrap();
        assert_ne!(fresh, run);
        assert!(done.is_empty());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn attaching_a_leg_names_it_in_the_invocation_and_tags_it() {
        let (a, dir) = archive("attach");
        let s = study();
        let run = "20260101-000000-aaaa";
        save_invocation(&a, run, &s, &Invocation::default()).unwrap();
        let mine = leg_run("20260101-000001-bbbb", "one", run, "d", Status::Complete);
        a.save(&mine).unwrap();
        let elsewhere = RunRecord {
            id: "20260101-000002-cccc".into(),
            workload: "null".into(),
            status: Status::Complete,
            ..Default::default()
        };
        a.save(&elsewhere).unwrap();
        assert_eq!(attach(&a, &mine.id, "two", &elsewhere.id).unwrap(), "pair");
        assert_eq!(a.load("pair.two").unwrap().id, elsewhere.id);
        let (records, answer) = report_of(&a, &mine).unwrap();
        assert_eq!(records.len(), 2);
        assert!(
            matches!(&answer.legs[1].state, evaluate::LegState::Ran { id, .. } if *id == elsewhere.id)
        );
        let e = attach(&a, &mine.id, "three", &elsewhere.id).unwrap_err();
        assert!(e.to_string().contains("has no leg \"three\""), "{e}");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
