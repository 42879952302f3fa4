//! The frame every page of `serve` shares: the report's style, a bar of links, and the
//! answers for a request that names no run or a broken one.

use crate::http::Response;
use crate::report::html::{STYLE, escape};

/// What `serve` adds to the report's style: the bar, the runs table's controls, the live
/// page's charts.
const EXTRA: &str = r#"
nav.serve { display: flex; gap: 14px; align-items: baseline; font-size: 13px; padding: 8px 28px; background: var(--band); border-bottom: 1px solid var(--rule); }
nav.serve a { color: #0b57a4; text-decoration: none; }
nav.serve .here { color: var(--muted); margin-left: auto; }
.controls { display: flex; gap: 10px; align-items: center; margin: 10px 0; flex-wrap: wrap; }
.controls input[type=search] { font: inherit; padding: 4px 8px; min-width: 28em; border: 1px solid var(--rule); border-radius: 4px; }
a.button { display: inline-block; padding: 4px 10px; border: 1px solid #0b57a4; border-radius: 4px; color: #0b57a4; text-decoration: none; }
a.button[aria-disabled=true] { border-color: var(--rule); color: var(--muted); pointer-events: none; }
th.sort { cursor: pointer; user-select: none; }
th.sort[aria-sort=ascending]::after { content: " \25B2"; font-size: 10px; }
th.sort[aria-sort=descending]::after { content: " \25BC"; font-size: 10px; }
td a { color: #0b57a4; text-decoration: none; }
.state { font-size: 12px; padding: 1px 6px; border-radius: 8px; background: var(--band); }
.state.running { background: #e3f4e6; color: #1b6b2c; }
.state.failed, .state.stopped { background: var(--warnbg); color: var(--warn); }
.muted { color: var(--muted); }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); gap: 14px 22px; margin: 10px 0; }
.charts svg { width: 100%; height: auto; display: block; border: 1px solid var(--rule); }
"#;

/// A whole page: `title`, the bar of links (with `here` at its right), and `body` (HTML,
/// already escaped), with `script` (trusted, perflab's own) at the end.
pub fn page(title: &str, here: &str, body: &str, script: Option<&str>) -> Response {
    let mut out = String::with_capacity(body.len() + 8 * 1024);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str(&format!("<title>{}</title>\n<style>", escape(title)));
    out.push_str(STYLE);
    out.push_str(EXTRA);
    out.push_str("</style>\n</head>\n<body>\n");
    out.push_str(&bar(here));
    out.push_str("<main>\n");
    out.push_str(body);
    out.push_str("</main>\n");
    if let Some(js) = script {
        out.push_str("<script>\n");
        out.push_str(js);
        out.push_str("\n</script>\n");
    }
    out.push_str("</body>\n</html>\n");
    let csp = match script {
        Some(_) => "default-src 'self'; style-src 'unsafe-inline'; script-src 'unsafe-inline'",
        None => "default-src 'self'; style-src 'unsafe-inline'",
    };
    Response::html(out).with_header("Content-Security-Policy", csp)
}

/// The bar of links at the top of every page.
pub fn bar(here: &str) -> String {
    format!(
        "<nav class=\"serve\"><a href=\"/\">perflab: runs</a><a href=\"/landscape\">landscape</a><span class=\"here\">{}</span></nav>\n",
        escape(here)
    )
}

/// A report rendered by `report::html`, with the bar of links put in at the top.
pub fn framed_report(html: String, here: &str, links: &[(&str, String)]) -> Response {
    let mut nav = bar(here);
    if !links.is_empty() {
        let extra: String = links
            .iter()
            .map(|(text, href)| format!("<a href=\"{}\">{}</a>", escape(href), escape(text)))
            .collect();
        nav = nav.replacen(
            "<span class=\"here\">",
            &format!("{extra}<span class=\"here\">"),
            1,
        );
    }
    let body = html.replacen("<body>\n", &format!("<body>\n{}", bar_style(&nav)), 1);
    Response::html(body).with_header(
        "Content-Security-Policy",
        "default-src 'self'; style-src 'unsafe-inline'",
    )
}

/// The bar with the few rules it needs, for pages whose style sheet is the report's alone.
fn bar_style(nav: &str) -> String {
    let rules: String = EXTRA
        .lines()
        .filter(|l| l.starts_with("nav.serve"))
        .collect::<Vec<_>>()
        .join("\n");
    format!("<style>{rules}</style>\n{nav}")
}

/// A page saying what went wrong, with its status.
pub fn problem(status: u16, message: &str) -> Response {
    let body = format!(
        "<header class=\"doc\"><h1>{}</h1></header>\n<p>{}</p>\n<p><a href=\"/\">All runs</a></p>\n",
        match status {
            400 => "Not a request perflab can answer",
            404 => "Not in this archive",
            _ => "The archive could not be read",
        },
        escape(message)
    );
    let mut r = page("perflab", "", &body, None);
    r.status = status;
    r
}
