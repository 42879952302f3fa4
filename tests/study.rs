//! Studies through the real binary: every built-in study reads and every leg's command line
//! parses; the paper's values are quoted exactly (checked against the seeds when
//! `../shared/seeds` is there); a quick study runs end to end, archives its legs tagged, and its
//! report renders in headless Chromium; `--resume`, `--check-shapes`, `perflab run FILE.toml`,
//! and a bad study file as one line with its file and line, exit 2. Group commit on a throwaway
//! PostgreSQL when PostgreSQL is installed.

mod common;

use common::browser::{dump_dom, tempdir};
use common::{Results, stderr, stdout};
use perflab::study::builtin;
use perflab::study::file::{Origin, parse, parse_printed};
use std::path::PathBuf;

fn study(name: &str) -> perflab::study::Study {
    parse(
        builtin::text(name).expect("built in"),
        &Origin { name, label: name },
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// `perflab ...` as the shell would split it (single quotes and `\'` outside them, as
/// --dry-run writes them).
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' if !quoted => cur.extend(chars.next()),
            '\'' => quoted = !quoted,
            ' ' if !quoted => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[test]
fn every_builtin_study_reads_and_every_dry_run_line_parses() {
    let r = Results::new("study-dry");
    for name in builtin::names() {
        let s = study(name);
        assert!(!s.legs.is_empty() && !s.paper.is_empty() && !s.shapes.is_empty());
        for quick in [false, true] {
            let mut args = vec!["study", name, "--dry-run"];
            if quick {
                args.push("--quick");
            }
            let o = common::run(&r, &args);
            assert!(o.status.success(), "{}", stderr(&o));
            let out = stdout(&o);
            let lines: Vec<&str> = out
                .lines()
                .map(|l| l.trim_start_matches("# "))
                .filter(|l| l.starts_with("perflab "))
                .collect();
            assert_eq!(lines.len(), s.legs.len(), "{out}");
            for line in lines {
                let argv = words(line);
                perflab::cli::parse(&argv).unwrap_or_else(|e| panic!("{line}: {e}"));
            }
        }
    }
}

/// Every quoted value is a verbatim piece of its line in the seed, and holds the printed value.
#[test]
fn the_papers_values_are_quoted_exactly() {
    let seeds = std::env::var_os("PERFLAB_SEEDS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/seeds"));
    for name in builtin::names() {
        let s = study(name);
        let seed = s.seed.clone().expect("a seed");
        let mut quotes: Vec<(usize, String, String)> = s
            .paper
            .iter()
            .map(|p| (p.line, p.quote.clone(), p.printed.clone()))
            .collect();
        for t in &s.tables {
            for row in &t.rows {
                // "-": no published value in that cell (a row of this machine's has none).
                for v in row.values.iter().filter(|v| *v != "-") {
                    quotes.push((row.line, row.quote.clone(), v.clone()));
                }
            }
        }
        for (_, quote, printed) in &quotes {
            // The value as printed is in the quote (a range 20..40 as 20-40).
            let shown = printed.replace("..", "-");
            let number = parse_printed(printed.split("..").next().unwrap_or(printed));
            assert!(
                quote.contains(&shown)
                    || quote.to_lowercase().contains(&shown.to_lowercase())
                    || number.is_some_and(|n| quote.contains(&format!("{n}"))),
                "{name}: {printed:?} is not in its quote {quote:?}"
            );
        }
        let path = seeds.join(&seed);
        let Ok(text) = std::fs::read_to_string(&path) else {
            // The seeds are documents, not servers: a clone without them says it skipped.
            common::skip::skip_host(&format!(
                "checking {name}'s quotes: {} is not here (set PERFLAB_SEEDS to their folder)",
                path.display()
            ));
            continue;
        };
        let lines: Vec<&str> = text.lines().collect();
        for (line, quote, _) in &quotes {
            let at = lines.get(line - 1).unwrap_or(&"");
            assert!(
                at.contains(quote.as_str()),
                "{name}: {seed} line {line} does not hold {quote:?}; it reads {at:?}"
            );
        }
    }
}

fn perflab_ok(r: &Results, args: &[&str]) -> std::process::Output {
    let o = common::run(r, args);
    assert!(
        o.status.success(),
        "perflab {}: {}\n{}",
        args.join(" "),
        stderr(&o),
        stdout(&o)
    );
    o
}

fn report_path(o: &std::process::Output) -> PathBuf {
    let out = stdout(o);
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix("report: "))
        .unwrap_or_else(|| panic!("no report line in: {out}"));
    PathBuf::from(line.split("  ").next().unwrap_or(line).trim())
}

#[test]
fn a_quick_study_runs_end_to_end_and_its_report_renders() {
    let r = Results::new("study-quick");
    let o = perflab_ok(&r, &["study", "ral-x4500", "--quick", "--leg", "threads"]);
    let out = stdout(&o);
    assert!(out.contains("Table 1: local I/O"), "{out}");
    assert!(out.contains("309 | "), "{out}");
    assert!(
        out.contains("streams: the read rate per stream falls"),
        "{out}"
    );
    assert!(out.contains("not run: not chosen (--leg)"), "{out}");
    let html = std::fs::read_to_string(report_path(&o)).expect("the report");
    assert!(html.contains("Study ral-x4500"));
    assert!(html.contains("paper | here | here/paper"));
    assert!(html.contains("Legs to run elsewhere"));

    // The run is archived as the study's leg.
    let runs = common::json(&perflab_ok(&r, &["show", "last", "--json"]));
    assert_eq!(runs["study"]["name"], "ral-x4500");
    assert_eq!(runs["study"]["leg"], "threads");
    // Each leg's latest run is tagged STUDY.LEG.
    let tagged = common::json(&perflab_ok(&r, &["show", "ral-x4500.threads", "--json"]));
    assert_eq!(tagged["id"], runs["id"]);

    // The report again, from the archive alone; rendered by a browser.
    let again = perflab_ok(&r, &["report", "--study", "last"]);
    let page = report_path(&again);
    let again_html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(again_html, html, "the same report from the archive");
    if let Some(dom) = dump_dom(&page) {
        assert!(dom.contains("Table 1: local I/O"));
        assert!(dom.contains("<svg"));
    }

    // A leg run elsewhere comes back by import and takes its place (here: this machine's own
    // threads run stands in for the other OS's).
    let id = runs["id"].as_str().unwrap().to_string();
    let file = r.path().join("runs").join(&id).join("run.json");
    let o = perflab_ok(
        &r,
        &[
            "import",
            &file.display().to_string(),
            "--study",
            "last",
            "--leg",
            "other-os",
        ],
    );
    assert!(
        stdout(&o).contains("is leg other-os of study ral-x4500"),
        "{}",
        stdout(&o)
    );
    let with =
        std::fs::read_to_string(report_path(&perflab_ok(&r, &["report", "--study", "last"])))
            .unwrap();
    assert!(!with.contains("452 | - | -"), "the Solaris row filled in");
    assert!(with.contains("452 | "));
    let o = common::run(
        &r,
        &[
            "import",
            &file.display().to_string(),
            "--study",
            "last",
            "--leg",
            "nope",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));

    // --resume reuses the complete leg.
    let o = perflab_ok(
        &r,
        &[
            "study",
            "ral-x4500",
            "--quick",
            "--leg",
            "threads",
            "--resume",
        ],
    );
    assert!(
        stderr(&o).contains("(--resume)") || stdout(&o).contains("(--resume)"),
        "{}",
        stderr(&o)
    );
    // ...but not with other flags.
    let o = perflab_ok(
        &r,
        &[
            "study",
            "ral-x4500",
            "--quick",
            "--leg",
            "threads",
            "--resume",
            "--duration",
            "500ms",
        ],
    );
    assert!(!stderr(&o).contains("(--resume)"), "{}", stderr(&o));

    // --json prints the answer: the legs, the paper's values, the checks with verdicts.
    let answer = common::json(&perflab_ok(
        &r,
        &[
            "study",
            "ral-x4500",
            "--quick",
            "--leg",
            "threads",
            "--resume",
            "--json",
        ],
    ))["answer"]
        .clone();
    assert_eq!(answer["name"], "ral-x4500");
    let shapes = answer["shapes"].as_array().expect("shapes");
    assert!(
        shapes
            .iter()
            .all(|s| ["pass", "fail", "not_applicable"].contains(&s["verdict"].as_str().unwrap())),
        "{answer}"
    );
    assert!(answer["tables"][0]["rows"][0]["cells"][0]["printed"] == "309");
    assert!(answer["omitted"].as_array().is_some_and(|o| !o.is_empty()));
}

const SMALL: &str = r#"
[study]
title = "Null, to test the harness"
question = "Does a study of the null target hold together?"

[defaults]
command = "null"
warmup = "0s"
duration = "200ms"

[[leg]]
name = "one"
threads = "1,2"

[[leg]]
name = "two"
threads = "1,2"

[[compare]]
baseline = "one"
candidate = "two"
expect = "1x"

[[figure]]
title = "null against threads"
legs = ["one", "two"]
x = "threads"
y = "ops_per_sec"
expect = "linear"

[[shape]]
name = "never true"
check = "ops_per_sec[one]@threads=1 > 2 * ops_per_sec[one]@threads=1"
"#;

#[test]
fn study_files_run_with_perflab_run_and_check_shapes_fails_in_ci() {
    let r = Results::new("study-file");
    let dir = tempdir("study-file");
    let file = dir.join("small.toml");
    std::fs::write(&file, SMALL).unwrap();
    let f = file.display().to_string();
    let o = perflab_ok(&r, &["run", &f]);
    let out = stdout(&o);
    assert!(out.contains("FAIL"), "{out}");
    assert!(
        out.contains("null against threads: efficiency against linear in threads: threads=1 100%"),
        "{out}"
    );
    assert!(out.contains("(1x), measured"), "{out}");
    let o = common::run(&r, &["study", &f, "--check-shapes"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("1 shape check(s) failed"),
        "{}",
        stderr(&o)
    );

    // A flag no leg takes, and a mistake in the file: one line, exit 2.
    let o = common::run(&r, &["study", &f, "--fruit", "1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--fruit: no leg of study small takes it"),
        "{}",
        stderr(&o)
    );
    std::fs::write(
        &file,
        SMALL.replace("threads = \"1,2\"", "thread = \"1,2\""),
    )
    .unwrap();
    let o = common::run(&r, &["study", &f]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains(
            "small.toml:13: leg 'one': perflab null has no option --thread; did you mean --threads?"
        ),
        "{e}"
    );
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    let o = common::run(&r, &["study", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("gray-thumper"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Gray's group commit on the study's own throwaway PostgreSQL: the check of log syncs per
/// transaction against a log force per commit is decided, or not applicable only because the
/// log force is not this machine's bottleneck.
#[test]
fn group_commit_on_a_throwaway_postgresql() {
    if let Some(why) = perflab::sql::throwaway::ThrowawayPostgres::unavailable() {
        common::skip::skip_or_fail(&format!("group commit: {why}"), "postgresql");
        return;
    }
    let r = Results::new("study-pg");
    let o = perflab_ok(
        &r,
        &[
            "study",
            "gray-thumper",
            "--quick",
            "--leg",
            "force",
            "--leg",
            "group",
        ],
    );
    let out = stdout(&o);
    assert!(
        out.contains("group commit cuts log writes per transaction at least 10x at 18 clients"),
        "{out}"
    );
    // Decided, or not applicable for the one stated reason (a CPU-bound machine has no log
    // bottleneck to relieve): never for a missing leg or figure.
    assert!(
        !out.contains("n/a   group commit cuts")
            || out.contains("not applicable here: the log force is not the bottleneck"),
        "{out}"
    );
    assert!(!out.contains("records no log_syncs_per_txn"), "{out}");
    assert!(
        out.contains("statements_per_sec") || out.contains("DebitCredit"),
        "{out}"
    );
}

/// Ctrl-C during a leg: exit 130, the finished leg and the interrupted one's steps saved;
/// `--resume` takes the finished leg as it is and runs the rest.
#[test]
fn a_study_cut_short_by_ctrl_c_resumes_where_it_stopped() {
    let r = Results::new("study-interrupt");
    let dir = tempdir("study-interrupt");
    let file = dir.join("two.toml");
    std::fs::write(
        &file,
        r#"
[study]
title = "Two legs, the second long enough to interrupt"
[defaults]
command = "null"
warmup = "0s"
[[leg]]
name = "short"
duration = "200ms"
[[leg]]
name = "long"
duration = "3s"
"#,
    )
    .unwrap();
    let f = file.display().to_string();
    let (mut child, rx, reader) = common::spawn_watching(&r, &["study", &f], "== leg long (2/2)");
    rx.recv_timeout(std::time::Duration::from_secs(60))
        .expect("the second leg starts");
    std::thread::sleep(std::time::Duration::from_millis(500));
    let (code, _) = common::interrupt_and_wait(&mut child, std::time::Duration::from_secs(30))
        .expect("the study stops");
    let err = reader.join().unwrap();
    assert_eq!(code, Some(130), "{err}");
    let o = perflab_ok(&r, &["study", &f, "--resume"]);
    let err = stderr(&o);
    assert!(err.contains("== leg short (1/2): complete in run"), "{err}");
    assert!(err.contains("== leg long (2/2): perflab null"), "{err}");
    assert!(!stdout(&o).contains("not run"), "{}", stdout(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A value taken from an earlier leg (`{= EXPR}`): computed when that leg has run, before
/// the leg that uses it; refused when its leg comes later or runs elsewhere. Values of the
/// machine alone are computed at once, and `--dry-run` shows the others as written.
#[test]
fn values_taken_from_earlier_legs_are_computed_before_their_leg_runs() {
    let r = Results::new("study-derived");
    let dir = tempdir("study-derived");
    let file = dir.join("derived.toml");
    let text = r#"
[study]
name = "derived"
title = "A rate at half an earlier leg's peak"

[defaults]
command = "null"
warmup = "0s"
duration = "300ms"

[[leg]]
name = "full-speed"
threads = "1,2"

[[leg]]
name = "elsewhere"
external = "another machine"

[[leg]]
name = "half"
threads = "{= round({cpus} / {cpus})}"
rate = "{= round(0.5 * max(ops_per_sec[full-speed] over threads))}/s"

[[shape]]
name = "the half-speed leg ran at about half the peak"
leg = "half"
check = "ops_per_sec <= 0.6 * max(ops_per_sec[full-speed] over threads)"
"#;
    std::fs::write(&file, text).unwrap();
    let f = file.display().to_string();
    let o = perflab_ok(&r, &["study", &f, "--dry-run"]);
    let out = stdout(&o);
    assert!(
        out.contains(
            "--threads 1 --rate '{= round(0.5 * max(ops_per_sec[full-speed] over threads))}/s'"
        ),
        "{out}"
    );
    assert!(out.contains("computed from the legs before it"), "{out}");
    let o = perflab_ok(&r, &["study", &f]);
    let out = stdout(&o);
    assert!(
        out.contains("pass  the half-speed leg ran at about half the peak"),
        "{out}"
    );
    let full = common::json(&common::run(&r, &["show", "derived.full-speed", "--json"]));
    let half = common::json(&common::run(&r, &["show", "derived.half", "--json"]));
    let peak = full["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["summary"]["ops_per_sec"]["mean"].as_f64())
        .fold(0.0, f64::max);
    let command: Vec<&str> = half["command"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    let rate = command
        .windows(2)
        .find(|w| w[0] == "--rate")
        .map(|w| w[1].trim_end_matches("/s").parse::<f64>().unwrap())
        .unwrap_or_else(|| panic!("{command:?}"));
    assert!(
        (rate - (0.5 * peak).round()).abs() <= 1.0,
        "{rate} against {peak}"
    );

    // Figures of a later leg, or of one that runs elsewhere: one line with the file's line.
    for (from, why) in [
        ("half", "it must come before this leg"),
        ("elsewhere", "it runs elsewhere"),
        ("nope", "no leg has that name"),
    ] {
        let bad = text.replace(
            "rate = \"{= round(0.5 * max(ops_per_sec[full-speed] over threads))}/s\"",
            &format!("rate = \"{{= ops_per_sec[{from}]@threads=1}}/s\""),
        );
        std::fs::write(&file, bad).unwrap();
        let o = common::run(&r, &["study", &f, "--dry-run"]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains("derived.toml:22: leg 'half'") && e.contains(why),
            "{e}"
        );
        assert_eq!(e.trim().lines().count(), 1, "{e}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
