//! Headless Chromium for the tests that look at a report as a browser renders it, and
//! temporary folders of a test's own.

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            let o = Command::new("sh")
                .args(["-c", &format!("command -v {name}")])
                .output()
                .ok()?;
            let p = String::from_utf8_lossy(&o.stdout).trim().to_string();
            (!p.is_empty()).then(|| PathBuf::from(p))
        })
}

/// The page as Chromium parsed it (headless, no network, a fresh profile), or None when
/// Chromium is not installed here (a failure when CI requires it).
pub fn dump_dom(page: &Path) -> Option<String> {
    let dom = chromium_on(&format!("file://{}", page.display()), &["--dump-dom"])?;
    Some(dom)
}

/// The page at `url` as Chromium left it after `budget_ms` of the page's own time (its
/// scripts, timers and fetches run), or None without Chromium.
pub fn dump_url(url: &str, budget_ms: u32) -> Option<String> {
    chromium_on(
        url,
        &["--dump-dom", &format!("--virtual-time-budget={budget_ms}")],
    )
}

/// A screenshot of `url` (1300 by 1000) in `png`, after `budget_ms` of the page's time.
pub fn screenshot(url: &str, png: &Path, budget_ms: u32) -> Option<()> {
    chromium_on(
        url,
        &[
            &format!("--screenshot={}", png.display()),
            "--window-size=1300,1000",
            "--hide-scrollbars",
            &format!("--virtual-time-budget={budget_ms}"),
        ],
    )?;
    Some(())
}

fn chromium_on(url: &str, what: &[&str]) -> Option<String> {
    let Some(bin) = chromium() else {
        super::skip::skip_or_fail("the Chromium check: chromium is not installed", "chromium");
        return None;
    };
    let profile = tempdir("chromium-profile");
    let o = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-dev-shm-usage",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(what)
        .arg(url)
        .output()
        .expect("chromium runs");
    let _ = std::fs::remove_dir_all(&profile);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    if what.contains(&"--dump-dom") {
        assert!(
            out.contains("</html>"),
            "chromium rendered nothing: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    Some(out)
}

/// A fresh directory of this test process's own: tests run in parallel threads of one
/// process, so the pid alone is not enough (two Chromiums once shared a profile and one
/// removed it under the other).
pub fn tempdir(name: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!("perflab-{name}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
