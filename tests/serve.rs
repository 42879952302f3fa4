//! `perflab serve`: the archive in a real browser (headless Chromium), read over real HTTP,
//! and the archive left exactly as it was.

mod common;

use common::Results;
use common::browser::{dump_url, screenshot, tempdir};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A `perflab serve` of its own, killed when dropped.
struct Serve {
    child: Child,
    url: String,
}

impl Serve {
    fn start(results: &Path) -> Serve {
        let mut child = Command::new(env!("CARGO_BIN_EXE_perflab"))
            .args(["serve", "--listen", "127.0.0.1:0", "--results"])
            .arg(results)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("perflab serve starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("the address line");
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .trim_end_matches('/')
            .to_string();
        assert!(line.contains("read-only"), "{line}");
        Serve { child, url }
    }

    /// `GET path` with `host` as the Host header: status, headers, body.
    fn get_as(&self, path: &str, host: &str, method: &str) -> (u16, String, Vec<u8>) {
        let addr = self.url.trim_start_matches("http://");
        let mut c = TcpStream::connect(addr).expect("connects");
        // A server that answers before it has read the request (a refusal, a busy 503) and
        // closes may make this write fail; its answer is still there to read.
        let _ = write!(c, "{method} {path} HTTP/1.1\r\nHost: {host}\r\n\r\n");
        let mut raw = Vec::new();
        let _ = c.read_to_end(&mut raw);
        assert!(!raw.is_empty(), "{method} {path}: no answer at all");
        let split = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("a header block");
        let head = String::from_utf8_lossy(&raw[..split]).into_owned();
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .expect("a status");
        (status, head, raw[split + 4..].to_vec())
    }

    fn get(&self, path: &str) -> (u16, String, Vec<u8>) {
        let host = self.url.trim_start_matches("http://").to_string();
        self.get_as(path, &host, "GET")
    }

    fn page(&self, path: &str) -> String {
        let (status, _, body) = self.get(path);
        let text = String::from_utf8_lossy(&body).into_owned();
        assert_eq!(status, 200, "{path}: {text}");
        text
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every file and folder under `dir`: path, size, modification time, inode.
fn snapshot(dir: &Path) -> Vec<(PathBuf, u64, i64, i64, u64)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let m = std::fs::symlink_metadata(e.path()).unwrap();
            if m.is_dir() {
                todo.push(e.path());
            }
            out.push((e.path(), m.len(), m.mtime(), m.mtime_nsec(), m.ino()));
        }
    }
    out.sort();
    out
}

fn ids(r: &Results) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(r.path().join("runs"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    ids.sort();
    ids
}

/// Two finished null runs (one tagged), and a copy of the second whose interval file stops
/// before its end: a run in progress, as far as anything reading the archive can tell.
fn archive() -> (Results, Vec<String>) {
    let r = Results::new("serve");
    for _ in 0..2 {
        let o = common::run(
            &r,
            &[
                "null",
                "--threads",
                "1,2",
                "--duration",
                "1s",
                "--warmup",
                "0s",
                "-q",
            ],
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let ids = ids(&r);
    let o = common::run(&r, &["tag", &ids[0], "baseline"]);
    assert!(o.status.success());
    let going = format!("{}-going", ids[1]);
    let from = r.path().join("runs").join(&ids[1]);
    let to = r.path().join("runs").join(&going);
    std::fs::create_dir_all(&to).unwrap();
    let mut record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(from.join("run.json")).unwrap()).unwrap();
    record["id"] = going.clone().into();
    record["status"] = "incomplete".into();
    std::fs::write(to.join("run.json"), serde_json::to_vec(&record).unwrap()).unwrap();
    let lines = std::fs::read_to_string(from.join("intervals.jsonl")).unwrap();
    let cut: String = lines
        .lines()
        .filter(|l| !l.contains("\"event\":\"end\"") && !l.contains("\"step\":1"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(to.join("intervals.jsonl"), cut).unwrap();
    (r, vec![ids[0].clone(), ids[1].clone(), going])
}

#[test]
fn the_archive_in_a_browser_and_left_as_it_was() {
    let (r, ids) = archive();
    // The copied run has no index row: serve must read it from its record, not index it.
    let before = snapshot(r.path());
    let serve = Serve::start(r.path());

    // The runs, newest first, with where each stands.
    let home = serve.page("/");
    for id in &ids {
        assert!(home.contains(&format!("href=\"/runs/{id}\"")), "{id}");
    }
    assert!(home.contains("baseline"), "tags are shown");
    let runs: serde_json::Value = serde_json::from_slice(&serve.get("/runs.json").2).unwrap();
    let state = |id: &str| {
        runs.as_array()
            .unwrap()
            .iter()
            .find(|x| x["id"] == id)
            .map(|x| x["live"].as_str().unwrap().to_string())
    };
    assert_eq!(state(&ids[0]).as_deref(), Some("ended"));
    assert_eq!(state(&ids[2]).as_deref(), Some("running"));

    // Each run's report, its files as stored, its intervals from an offset.
    let report = serve.page(&format!("/runs/{}", ids[0]));
    assert!(report.contains("<h1>") && report.contains(&format!("/live/{}", ids[0])));
    let stored = std::fs::read(r.path().join("runs").join(&ids[0]).join("run.json")).unwrap();
    assert_eq!(serve.get(&format!("/runs/{}/run.json", ids[0])).2, stored);
    let file = std::fs::read(r.path().join("runs").join(&ids[0]).join("intervals.jsonl")).unwrap();
    let (_, head, body) = serve.get(&format!("/runs/{}/intervals.jsonl", ids[0]));
    assert_eq!(body, file);
    assert!(
        head.contains(&format!("X-Perflab-Next: {}", file.len())),
        "{head}"
    );
    let half = file.len() / 2;
    let (_, head, tail) = serve.get(&format!("/runs/{}/intervals.jsonl?from={half}", ids[0]));
    assert!(
        tail.ends_with(b"\n") && file.ends_with(&tail),
        "whole lines from the offset"
    );
    assert!(head.contains(&format!("X-Perflab-Next: {}", file.len())));

    // Two runs compared, several in one report, the landscape.
    let compare = serve.page(&format!("/compare?runs={},{}", ids[0], ids[1]));
    assert!(
        ["faster", "slower", "equivalent", "inconclusive"]
            .iter()
            .any(|v| compare.contains(v)),
        "a verdict"
    );
    let several = serve.page(&format!("/report?runs={},{}", ids[0], ids[1]));
    assert!(several.contains(&ids[0]) && several.contains(&ids[1]));
    let landscape = serve.page("/landscape");
    assert!(landscape.contains(&format!("<a href=\"/runs/{}\">", ids[1])));

    assert_eq!(snapshot(r.path()), before, "serve wrote nothing");
    // What it refuses: other hosts' names, writes, paths out of the archive, unknown runs.
    let outside = tempdir("serve-outside");
    std::fs::copy(
        r.path().join("runs").join(&ids[0]).join("run.json"),
        outside.join("run.json"),
    )
    .unwrap();
    std::os::unix::fs::symlink(&outside, r.path().join("runs").join("linked")).unwrap();
    let before_link = snapshot(r.path());
    let addr = serve.url.trim_start_matches("http://").to_string();
    assert_eq!(serve.get_as("/", "evil.example", "GET").0, 421);
    assert_eq!(serve.get_as("/", &addr, "POST").0, 405);
    assert_eq!(serve.get_as("/", &addr, "DELETE").0, 405);
    for path in [
        "/runs/linked",
        "/runs/linked/run.json",
        "/runs/%2e%2e/run.json",
        "/runs/..%2F..%2Fetc/run.json",
        "/runs/../index.sqlite",
        "/runs/nosuch",
        "/live/nosuch",
        "/index.sqlite",
        "/tags.json",
    ] {
        assert_eq!(serve.get(path).0, 404, "{path}");
    }
    assert_eq!(serve.get(&format!("/compare?runs={}", ids[0])).0, 400);
    assert_eq!(
        serve
            .get(&format!("/compare?runs={},{}&noise=99", ids[0], ids[1]))
            .0,
        400
    );
    assert_eq!(serve.get("/%zz").0, 400);
    assert_eq!(serve.get_as("/", &addr, "HEAD").2, b"");

    // In a browser: the table sorted and filtered by the address, the live page drawn.
    let Some(dom) = dump_url(
        &format!("{}/#q=baseline&sort=peak&dir=ascending", serve.url),
        2000,
    ) else {
        return;
    };
    assert!(
        dom.contains(&format!("1 of {} runs shown", ids.len())),
        "filtered: {dom}"
    );
    assert!(dom.contains("aria-sort=\"ascending\""), "sorted");
    let shown: Vec<&str> = dom
        .split("<tr data-id=\"")
        .skip(1)
        .filter(|row| !row.split('>').next().unwrap_or("").contains("hidden"))
        .map(|row| row.split('"').next().unwrap_or(""))
        .collect();
    assert_eq!(shown, vec![ids[0].as_str()], "only the tagged run shows");

    let dom = dump_url(&format!("{}/live/{}", serve.url, ids[0]), 4000).unwrap();
    assert!(dom.contains("data-state=\"ended\""), "the end came: {dom}");
    assert!(dom.contains("class=\"line\""), "charts drawn");
    assert_eq!(dom.matches("<td>done</td>").count(), 2, "two trials done");
    let dom = dump_url(&format!("{}/live/{}", serve.url, ids[2]), 4000).unwrap();
    assert!(dom.contains("data-state=\"running\""), "no end yet");
    assert!(dom.contains("<td>done</td>"), "the first trial's totals");

    // Screenshots to look at (kept under the temporary folder when PERFLAB_KEEP_SHOTS is set).
    let shots = tempdir("serve-shots");
    for (name, path) in [
        ("runs", "/".to_string()),
        ("live", format!("/live/{}", ids[0])),
        ("compare", format!("/compare?runs={},{}", ids[0], ids[1])),
    ] {
        let png = shots.join(format!("{name}.png"));
        screenshot(&format!("{}{path}", serve.url), &png, 3000).unwrap();
        let size = std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
        assert!(size > 10_000, "{name}: a screenshot of {size} bytes");
    }
    if std::env::var_os("PERFLAB_KEEP_SHOTS").is_none() {
        let _ = std::fs::remove_dir_all(&shots);
    } else {
        eprintln!("screenshots in {}", shots.display());
    }

    // Nothing in the archive changed: no index row, no report, no folder.
    assert_eq!(snapshot(r.path()), before_link, "serve wrote nothing");
    std::fs::remove_file(r.path().join("runs").join("linked")).unwrap();
    let _ = std::fs::remove_dir_all(&outside);
}

#[test]
fn bad_serve_lines_are_one_line_and_exit_2() {
    let r = Results::new("serve-bad");
    // No archive there yet: refused, and nothing created.
    let o = common::run(&r, &["serve", "--listen", "127.0.0.1:0"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no perflab archive there"), "{err}");
    assert_eq!(err.lines().count(), 1);
    assert!(!r.path().exists(), "serve created nothing");
    let o = common::run(&r, &["null", "--duration", "200ms", "--warmup", "0s", "-q"]);
    assert!(o.status.success());
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port().to_string();
    for (listen, says) in [
        ("nonsense", "give HOST:PORT"),
        ("8080", "give HOST:PORT"),
        (&format!("127.0.0.1:{port}")[..], "cannot listen there"),
    ] {
        let o = common::run(&r, &["serve", "--listen", listen]);
        assert_eq!(o.status.code(), Some(2), "{listen}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(says) && err.lines().count() == 1,
            "{listen}: {err}"
        );
    }
}
