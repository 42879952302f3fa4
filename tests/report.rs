//! Reports and comparisons through the real binary: HTML rendered in real headless Chromium
//! (every chart present and drawn), self-contained (nothing fetched), byte-identical from the
//! same records, Markdown with its SVG files; `compare` verdicts, `--fail-on regression`,
//! tags; old records re-render.

mod common;

use common::browser::{dump_dom, tempdir};
use common::{Results, json, stderr, stdout};
use std::path::{Path, PathBuf};
use std::process::Output;

fn perflab(r: &Results, args: &[&str]) -> Output {
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

/// A short null run.
fn null(r: &Results, extra: &[&str]) -> String {
    let mut args = vec![
        "null",
        "--warmup",
        "0s",
        "--duration",
        "300ms",
        "--json",
        "-q",
    ];
    args.extend_from_slice(extra);
    let o = perflab(r, &args);
    json(&o)["id"].as_str().expect("an id").to_string()
}

/// The path a `report` command printed.
fn report_path(o: &Output) -> PathBuf {
    let out = stdout(o);
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix("report: "))
        .unwrap_or_else(|| panic!("no report line in: {out}"));
    PathBuf::from(line.split("  ").next().unwrap_or(line).trim())
}

/// Every `<figure>` holds an `<svg class="chart">` with drawn data in it; returns how many.
fn assert_figures_drawn(html: &str) -> usize {
    let figures: Vec<&str> = html.split("<figure").skip(1).collect();
    for f in &figures {
        let body = &f[..f.find("</figure>").expect("a closed figure")];
        assert!(
            body.contains("<svg"),
            "a figure without a chart: {body:.300}"
        );
        assert!(
            body.contains("class=\"chart"),
            "a chart without its class: {body:.300}"
        );
        let drawn = ["<path", "<polyline", "<circle", "<rect"]
            .iter()
            .map(|t| body.matches(t).count())
            .sum::<usize>();
        assert!(drawn >= 3, "a chart with nothing drawn: {body:.600}");
        assert!(!body.contains("no data"), "an empty chart: {body:.600}");
        for bad in ["NaN", "inf\"", "undefined"] {
            assert!(!body.contains(bad), "{bad} in a chart: {body:.600}");
        }
    }
    figures.len()
}

/// Nothing in the file would be fetched: no scripts, style sheets, images, fonts or frames
/// from elsewhere, no absolute URLs but the SVG namespace.
fn assert_self_contained(html: &str) {
    let without_ns = html.replace("http://www.w3.org/2000/svg", "");
    for bad in [
        "http://", "https://", "<script", "<link", "<img", "<iframe", "url(", "@import", "src=",
        "//cdn",
    ] {
        assert!(
            !without_ns.contains(bad),
            "the report refers outside itself: {bad}"
        );
    }
    for href in without_ns.split("href=\"").skip(1) {
        assert!(href.starts_with('#'), "a link out of the file: {href:.80}");
    }
}

/// Writes a report of `runs` and checks it in Chromium; returns the HTML.
fn render_checked(r: &Results, runs: &[&str], extra: &[&str], min_figures: usize) -> String {
    let mut args = vec!["report"];
    args.extend_from_slice(runs);
    args.extend_from_slice(extra);
    let path = report_path(&perflab(r, &args));
    let html = std::fs::read_to_string(&path).unwrap();
    assert_self_contained(&html);
    let n = assert_figures_drawn(&html);
    assert!(n >= min_figures, "{n} figures, expected {min_figures}+");
    if let Some(dom) = dump_dom(&path) {
        // What the browser built has every chart the file has.
        assert_eq!(assert_figures_drawn(&dom), n);
        assert_eq!(dom.matches("<svg").count(), html.matches("<svg").count());
    }
    html
}

#[test]
fn a_sweep_with_repeats_draws_curves_fits_and_renders_in_chromium() {
    let r = Results::new("report-sweep");
    let id = null(
        &r,
        &["--threads", "1..6", "--spin", "20us", "--repeat", "2"],
    );
    let html = render_checked(&r, &[&id], &["--slo", "p99<50ms"], 4);
    for part in [
        "against threads",
        "Response time against",
        "Latency spectrum",
        "Throughput",
        "Universal Scalability Law",
        "knee (threads)",
        "p99&lt;50ms holds",
        "disclosure",
    ] {
        assert!(html.contains(part), "{part} missing");
    }
    // The same records give the same bytes.
    let again = std::fs::read_to_string(report_path(&perflab(
        &r,
        &["report", &id, "--slo", "p99<50ms"],
    )))
    .unwrap();
    assert_eq!(html, again);
    // The curve analysis is in the record itself, not only in the report.
    let rec = json(&perflab(&r, &["show", &id, "--json"]));
    assert!(
        rec["analysis"]["curves"][0]["usl"]["sigma"].is_number(),
        "{}",
        rec["analysis"]
    );
}

#[test]
fn a_grid_is_drawn_as_a_heatmap_and_an_io_run_by_group() {
    let r = Results::new("report-grid");
    let grid = null(&r, &["--threads", "1,2", "--spin", "0,5us,20us"]);
    let html = render_checked(&r, &[&grid], &[], 3);
    assert!(html.contains(" by spin × threads") || html.contains(" by threads × spin"));

    let dir = tempdir("report-io");
    let dir_s = dir.display().to_string();
    let io = perflab(
        &r,
        &[
            "io",
            "--path",
            &dir_s,
            "--rw",
            "randrw",
            "--bs",
            "4k",
            "--size",
            "8m",
            "--files",
            "2",
            "--direct",
            "0",
            "--engine",
            "sync",
            "--warmup",
            "0s",
            "--duration",
            "300ms",
            "--json",
            "-q",
        ],
    );
    let io_id = json(&io)["id"].as_str().unwrap().to_string();
    let html = render_checked(&r, &[&io_id], &[], 2);
    assert!(html.contains("Latency by group"), "no group spectrum");
    assert!(html.contains("by direction, block size and file"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_oltp_run_shows_its_transaction_types() {
    let r = Results::new("report-oltp");
    let o = perflab(
        &r,
        &[
            "oltp",
            "--workload",
            "orderentry",
            "--scale",
            "1",
            "--clients",
            "1,2",
            "--warmup",
            "0s",
            "--duration",
            "500ms",
            "--json",
            "-q",
        ],
    );
    let id = json(&o)["id"].as_str().unwrap().to_string();
    let html = render_checked(&r, &[&id], &[], 3);
    assert!(html.contains("by transaction type"));
    assert!(html.contains("new_order") && html.contains("lookup"));
}

#[test]
fn several_runs_get_a_cover_a_landscape_and_markdown_with_svg_files() {
    let r = Results::new("report-several");
    let a = null(&r, &["--threads", "1,2"]);
    let b = null(&r, &["--threads", "1,2", "--spin", "10us"]);
    let html = render_checked(&r, &[&a, &b], &["--landscape"], 4);
    assert!(html.contains("landscape: runs ranked"));
    assert!(
        html.contains("spec.spin"),
        "the differing setting is a column"
    );
    assert!(html.contains(&format!("href=\"#run-{a}\"")));

    let dir = tempdir("report-md");
    let md = dir.join("report.md");
    let md_s = md.display().to_string();
    perflab(&r, &["report", &a, &b, "-o", &md_s]);
    let text = std::fs::read_to_string(&md).unwrap();
    let svgs: Vec<_> = std::fs::read_dir(dir.join("report-files"))
        .unwrap()
        .collect();
    assert!(!svgs.is_empty());
    assert_eq!(text.matches("](report-files/").count(), svgs.len());
    for f in svgs {
        let svg = std::fs::read_to_string(f.unwrap().path()).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("xmlns=\"http://www.w3.org/2000/svg\""));
    }
    // A second report to the same name is refused, and the first is left alone.
    let again = common::run(&r, &["report", &a, "-o", &md_s]);
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert_eq!(std::fs::read_to_string(&md).unwrap(), text);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_balance_sheet_writes_its_report() {
    let r = Results::new("report-suite");
    let io_dir = tempdir("report-suite-io");
    let o = perflab(
        &r,
        &[
            "run",
            "--quick",
            "-q",
            "--io-path",
            &io_dir.display().to_string(),
        ],
    );
    let path = report_path(&o);
    assert!(path.starts_with(r.path()), "{}", path.display());
    let html = std::fs::read_to_string(&path).unwrap();
    assert_self_contained(&html);
    let n = assert_figures_drawn(&html);
    assert!(n >= 8, "{n} figures");
    assert!(html.contains("Rules of thumb") && html.contains("memory bandwidth"));
    if let Some(dom) = dump_dom(&path) {
        assert_eq!(assert_figures_drawn(&dom), n);
    }
    // And again later, from the archive.
    let again = report_path(&perflab(&r, &["report", "--suite", "last"]));
    assert_eq!(std::fs::read_to_string(again).unwrap(), html);
    let _ = std::fs::remove_dir_all(&io_dir);
}

#[test]
fn old_records_re_render() {
    let r = Results::new("report-fixture");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/records");
    for entry in std::fs::read_dir(&fixtures).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let id = v["id"].as_str().unwrap();
        let dir = r.path().join("runs").join(id);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("run.json"), &text).unwrap();
        let o = perflab(&r, &["report", id]);
        let html = std::fs::read_to_string(report_path(&o)).unwrap();
        assert_self_contained(&html);
        assert_figures_drawn(&html);
    }
}

#[test]
fn compare_gives_verdicts_tags_baselines_and_fails_on_a_regression() {
    let r = Results::new("compare");
    // A tenfold difference: the verdict must not depend on how busy the test machine is.
    let fast = null(&r, &["--threads", "1,2", "--repeat", "5", "--spin", "5us"]);
    let slow = null(&r, &["--threads", "1,2", "--repeat", "5", "--spin", "50us"]);
    perflab(&r, &["tag", &fast, "baseline"]);

    let same = perflab(&r, &["compare", "baseline", &fast]);
    let text = stdout(&same);
    assert!(text.contains("0 faster, 0 slower"), "{text}");
    assert!(text.contains("no difference in the disclosure"), "{text}");

    let o = common::run(
        &r,
        &["compare", "baseline", &slow, "--fail-on", "regression"],
    );
    assert_eq!(o.status.code(), Some(3), "{}\n{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("slower"), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("spec.spin_ns"),
        "the spin differs: {}",
        stdout(&o)
    );
    assert!(stderr(&o).contains("slower beyond the noise"));

    let j = json(&perflab(&r, &["compare", "baseline", &slow, "--json"]));
    let rows = j["pairs"][0]["rows"].as_array().unwrap();
    let tput: Vec<_> = rows
        .iter()
        .filter(|x| x["figure"] == "ops_per_sec")
        .collect();
    assert_eq!(tput.len(), 2, "{rows:?}");
    for t in &tput {
        assert!(t["ratio"].as_f64().unwrap() < 0.5, "{t}");
        assert_ne!(t["verdict"], "faster", "{t}");
    }
    let slower = tput
        .iter()
        .find(|t| t["verdict"] == "slower")
        .expect("a slower step");
    assert!(slower["p_adjusted"].as_f64().unwrap() < 0.05);
    assert_eq!(j["pairs"][0]["tally"]["faster"], 0);

    // An HTML comparison, checked like any report.
    let dir = tempdir("compare-html");
    let out = dir.join("c.html");
    perflab(
        &r,
        &["compare", &fast, &slow, "-o", &out.display().to_string()],
    );
    let html = std::fs::read_to_string(&out).unwrap();
    assert_self_contained(&html);
    assert!(assert_figures_drawn(&html) >= 1);
    assert!(html.contains("step by step") && html.contains("what else differs"));
    let _ = std::fs::remove_dir_all(&dir);

    for (args, needle) in [
        (vec!["compare", &fast], "RUN"),
        (vec!["compare", &fast, &slow, "--noise", "x"], "--noise"),
        (
            vec!["compare", &fast, &slow, "--expect", "soon"],
            "--expect",
        ),
        (vec!["tag", &fast, "1abc"], "starts with a letter"),
        (vec!["report", "nosuch"], "no run matches"),
        (vec!["report", &fast, "--slo", "p99"], "p99<10ms"),
    ] {
        let o = common::run(&r, &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    }
}

/// The page as Chromium lays it out at `width` pixels, with what a script measured written
/// into the body's `data-measured`: tables wider than their box (scrolled sideways), and
/// the text of every SVG tick label.
fn laid_out(page: &Path, width: u32) -> Option<String> {
    let html = std::fs::read_to_string(page).expect("the report");
    let script = r#"<script>
const wide = [...document.querySelectorAll('.table')]
  .filter(d => d.scrollWidth > d.clientWidth + 1)
  .map(d => (d.querySelector('caption') || {}).textContent);
document.body.dataset.measured = JSON.stringify({ wide });
</script></body>"#;
    let dir = tempdir("laid-out");
    let copy = dir.join("page.html");
    std::fs::write(&copy, html.replace("</body>", script)).unwrap();
    let bin = common::browser::chromium().or_else(|| {
        common::skip::skip_or_fail("the Chromium check: chromium is not installed", "chromium");
        None
    })?;
    let profile = tempdir("chromium-profile");
    let o = std::process::Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-dev-shm-usage",
            &format!("--window-size={width},900"),
            &format!("--user-data-dir={}", profile.display()),
            "--dump-dom",
            &format!("file://{}", copy.display()),
        ])
        .output()
        .expect("chromium runs");
    let _ = std::fs::remove_dir_all(&profile);
    let _ = std::fs::remove_dir_all(&dir);
    let dom = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(dom.contains("data-measured"), "the script ran: {dom:.300}");
    Some(dom)
}

#[test]
fn reports_hide_nothing_state_the_objective_and_name_runs_by_tag() {
    let r = Results::new("report-nothing-hidden");
    // Two steps whose responses reach past 1 ms, repeated twice: wide intervals, few samples.
    let spin = ["--spin", "2ms", "--threads", "1,2", "--repeat", "2"];
    let base = null(&r, &spin);
    let cand = null(&r, &spin);
    perflab(&r, &["tag", &base, "base"]);
    perflab(&r, &["tag", &cand, "cand"]);
    let dir = tempdir("report-nothing-hidden");
    let page = dir.join("r.html");
    perflab(
        &r,
        &[
            "report",
            "cand",
            "--slo",
            "p99<1ms",
            "-o",
            page.to_str().unwrap(),
        ],
    );
    let html = std::fs::read_to_string(&page).unwrap();
    // The objective is stated even on two steps, too few for a curve.
    assert!(
        html.contains("SLO p99&lt;1ms: broken at every step")
            && html.contains("needs a load curve of three steps or more"),
        "the SLO line"
    );
    // Every column of the steps table is in it, and no table scrolls sideways at 1300 px.
    for head in ["p99", "p99.9", "max", "errors"] {
        assert!(
            html.contains(&format!("<th class=\"n\">{head}</th>")),
            "{head}"
        );
    }
    let Some(dom) = laid_out(&page, 1300) else {
        return;
    };
    assert!(
        dom.contains(r#"data-measured="{&quot;wide&quot;:[]}""#),
        "a table scrolls: {}",
        &dom[dom.find("data-measured").unwrap()..][..200]
    );
    // The spectrum's response-time axis is ticked to its data: its top tick is at or above
    // the slowest op of any step.
    let spectrum = &html[html.find("Latency spectrum").expect("a spectrum")..];
    let spectrum = &spectrum[..spectrum.find("</svg>").unwrap()];
    let top_tick = spectrum
        .split("text-anchor=\"end\" fill=\"#444\">")
        .skip(1)
        .filter_map(|t| time_ns(&t[..t.find('<')?]))
        .fold(0.0, f64::max);
    let o = perflab(&r, &["export", "cand"]);
    let slowest = json(&o)["steps"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["trials"].as_array().unwrap())
        .map(|t| t["latency"]["max_ns"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert!(slowest > 1e6, "the test's ops take milliseconds");
    assert!(
        top_tick >= slowest * 0.999,
        "top tick {top_tick} ns under the data's {slowest} ns"
    );
    // The resources table has a row per repeat, and perflab's CPU on the base of all CPUs.
    assert!(html.contains("own CPU: % of all CPUs"));
    assert!(html.contains("<th class=\"n\">repeat</th>") || html.contains("<th>repeat</th>"));

    let cmp = dir.join("c.html");
    perflab(
        &r,
        &["compare", "base", "cand", "-o", cmp.to_str().unwrap()],
    );
    let html = std::fs::read_to_string(&cmp).unwrap();
    assert!(
        html.contains("cand (") && html.contains("base ("),
        "titles name the tags"
    );
    let overlay = &html[html.find("against threads").expect("the overlay")..];
    let overlay = &overlay[..overlay.find("</figure>").unwrap()];
    assert!(
        overlay.contains(">base") && overlay.contains(">cand"),
        "legends by tag"
    );
    // No tick of the throughput axis below zero, however wide the whiskers.
    assert!(
        !overlay.contains(">-") && !overlay.contains(">−"),
        "{overlay:.3000}"
    );
    assert!(html.contains("too few samples"));
    assert!(html.contains("it has no interval of its own"));
    let _ = laid_out(&cmp, 1300).map(|dom| {
        assert!(dom.contains(r#"data-measured="{&quot;wide&quot;:[]}""#));
    });
    let _ = std::fs::remove_dir_all(&dir);
}

/// `6.00 ms`, `100 µs`, `0 ns` in nanoseconds.
fn time_ns(label: &str) -> Option<f64> {
    let (n, unit) = label.trim().split_once(' ')?;
    let scale = match unit {
        "ns" => 1.0,
        "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return None,
    };
    Some(n.parse::<f64>().ok()? * scale)
}
