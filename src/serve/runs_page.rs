//! `/`: the archive's runs as a table, newest first. The table is written by the server, so
//! it reads without JavaScript; the page's script sorts it (click a heading), filters it
//! (every word typed must appear in a row), and turns the runs picked into links: compare
//! (the first picked is the baseline), one report, the landscape. The sort and the filter
//! live in the address's `#` part, so a view can be bookmarked or sent.

use super::files::LiveState;
use super::page::page;
use crate::archive::{Listing, RunStore};
use crate::http::{Response, encode};
use crate::report::html::escape;
use crate::vocab::numbers::metric;

/// The most runs the page lists: the newest (a shared store may hold a team's years).
const PAGE: usize = 1000;

/// The runs the page (and `/runs.json`) lists.
pub fn listing() -> Listing {
    Listing {
        newest: Some(PAGE),
        host: None,
    }
}

pub fn page_of(archive: &dyn RunStore) -> Response {
    let runs = match archive.list(&listing()) {
        Ok(r) => r,
        Err(e) => return super::page::problem(500, &e.to_string()),
    };
    let tags = archive.tags().unwrap_or_default();
    let mut body = String::with_capacity(runs.len() * 600 + 4096);
    let shown = match runs.len() {
        PAGE => format!("the newest {PAGE} of {} runs", archive.count().unwrap_or(0)),
        n => format!("{n} runs"),
    };
    body.push_str(&format!(
        "<header class=\"doc\"><h1>Runs</h1><p class=\"sub\">{shown} in {}</p></header>\n",
        escape(&archive.place())
    ));
    body.push_str(concat!(
        "<div class=\"controls\">",
        "<input type=\"search\" id=\"filter\" placeholder=\"filter: words that must all appear\" aria-label=\"filter\">",
        "<a class=\"button\" id=\"compare\" aria-disabled=\"true\" href=\"#\">compare picked</a>",
        "<a class=\"button\" id=\"report\" aria-disabled=\"true\" href=\"#\">report of picked</a>",
        "<a class=\"button\" id=\"landscape\" href=\"/landscape\">landscape of shown</a>",
        "<span class=\"muted\" id=\"count\"></span>",
        "</div>\n"
    ));
    body.push_str("<div class=\"table\"><table id=\"runs\">\n<thead><tr><th>pick</th>");
    for (key, head, numeric) in COLUMNS {
        body.push_str(&format!(
            "<th class=\"sort{}\" data-key=\"{key}\">{head}</th>",
            if *numeric { " n" } else { "" }
        ));
    }
    // The host, last and not sorted on: a run's machine, for archives with imported runs.
    body.push_str("<th>host</th></tr></thead>\n<tbody>\n");
    for r in runs.iter().rev() {
        let state = archive.run_dir(&r.id).map(|d| LiveState::of(&d));
        let named: Vec<&str> = tags
            .iter()
            .filter(|(_, id)| **id == r.id)
            .map(|(n, _)| n.as_str())
            .collect();
        let id = encode(&r.id);
        let (status, class) = match (r.status.as_str(), state) {
            ("incomplete", Some(LiveState::Running)) => ("running", "running"),
            ("incomplete", Some(LiveState::Stopped)) => ("stopped", "stopped"),
            (s, _) => (s, s),
        };
        let peak = r
            .peak_value
            .map(|v| metric(&r.peak_metric, v))
            .unwrap_or_else(|| "-".into());
        body.push_str(&format!("<tr data-id=\"{}\">", escape(&r.id)));
        body.push_str(&format!(
            "<td><input type=\"checkbox\" class=\"pick\" value=\"{}\" aria-label=\"pick {}\"></td>",
            escape(&r.id),
            escape(&r.id)
        ));
        let cells: [(String, String); 9] = [
            (
                r.started_at.clone(),
                escape(
                    &r.started_at
                        .get(..19)
                        .unwrap_or(&r.started_at)
                        .replace('T', " "),
                ),
            ),
            (
                r.id.clone(),
                format!("<a href=\"/runs/{id}\">{}</a>", escape(&r.id)),
            ),
            (r.workload.clone(), escape(&r.workload)),
            (r.target.clone(), escape(&r.target)),
            (r.settings.clone(), escape(&r.settings)),
            (r.steps.to_string(), r.steps.to_string()),
            (
                r.peak_value.map(|v| v.to_string()).unwrap_or_default(),
                escape(&peak),
            ),
            (
                status.to_string(),
                format!(
                    "<span class=\"state {class}\">{status}</span> <a href=\"/live/{id}\">live</a>"
                ),
            ),
            (named.join(", "), escape(&named.join(", "))),
        ];
        for ((value, html), (_, _, numeric)) in cells.iter().zip(COLUMNS) {
            body.push_str(&format!(
                "<td{} data-v=\"{}\">{html}</td>",
                if *numeric { " class=\"n\"" } else { "" },
                escape(value)
            ));
        }
        body.push_str(&format!("<td>{}</td></tr>\n", escape(&r.host)));
    }
    body.push_str("</tbody></table></div>\n");
    if runs.is_empty() {
        body.push_str(
            "<p>No runs yet: record one, e.g. <code>perflab run --quick</code>, and reload.</p>\n",
        );
    }
    page("perflab: runs", "read-only", &body, Some(SCRIPT))
}

/// The sortable columns: key (for the address), heading, numeric.
const COLUMNS: &[(&str, &str, bool)] = &[
    ("started", "started", false),
    ("id", "run", false),
    ("workload", "workload", false),
    ("target", "target", false),
    ("settings", "settings", false),
    ("steps", "steps", true),
    ("peak", "peak", true),
    ("status", "status", false),
    ("tags", "tags", false),
];

/// Sorting, filtering and picking. It reads cells' `data-v` (raw values, numbers unformatted)
/// and writes nothing but the table's order, rows' visibility and the buttons' links.
const SCRIPT: &str = r#"
(function () {
  const table = document.getElementById('runs');
  const body = table.tBodies[0];
  const rows = Array.from(body.rows);
  const heads = Array.from(table.tHead.rows[0].cells);
  const filter = document.getElementById('filter');
  const picked = [];
  let sort = { key: 'started', dir: 'descending' };

  function state() {
    const p = new URLSearchParams(location.hash.slice(1));
    if (p.get('q') !== null) filter.value = p.get('q');
    if (p.get('sort')) sort = { key: p.get('sort'), dir: p.get('dir') === 'ascending' ? 'ascending' : 'descending' };
  }
  function save() {
    const p = new URLSearchParams();
    if (filter.value) p.set('q', filter.value);
    p.set('sort', sort.key);
    p.set('dir', sort.dir);
    history.replaceState(null, '', '#' + p.toString());
  }
  function column(key) {
    return heads.findIndex(h => h.dataset.key === key);
  }
  function apply() {
    const i = column(sort.key);
    if (i >= 0) {
      const numeric = heads[i].classList.contains('n');
      const sign = sort.dir === 'ascending' ? 1 : -1;
      const value = r => r.cells[i].dataset.v || '';
      rows.sort((a, b) => {
        if (numeric) {
          const x = parseFloat(value(a)), y = parseFloat(value(b));
          const nx = isNaN(x), ny = isNaN(y);
          if (nx || ny) return nx - ny;
          return sign * (x - y);
        }
        return sign * value(a).localeCompare(value(b));
      });
      rows.forEach(r => body.appendChild(r));
      heads.forEach((h, j) => h.setAttribute('aria-sort', j === i ? sort.dir : 'none'));
    }
    const words = filter.value.toLowerCase().split(/\s+/).filter(w => w);
    let shown = 0;
    rows.forEach(r => {
      const text = r.textContent.toLowerCase();
      const ok = words.every(w => text.includes(w));
      r.hidden = !ok;
      if (ok) shown++;
    });
    document.getElementById('count').textContent = shown + ' of ' + rows.length + ' runs shown';
    const visible = rows.filter(r => !r.hidden).map(r => r.dataset.id);
    const land = document.getElementById('landscape');
    land.href = words.length ? '/landscape?runs=' + visible.map(encodeURIComponent).join(',') : '/landscape';
    links();
  }
  function links() {
    const ids = picked.map(encodeURIComponent).join(',');
    const cmp = document.getElementById('compare');
    const rep = document.getElementById('report');
    cmp.setAttribute('aria-disabled', picked.length < 2 ? 'true' : 'false');
    rep.setAttribute('aria-disabled', picked.length < 1 ? 'true' : 'false');
    cmp.href = '/compare?runs=' + ids;
    rep.href = '/report?runs=' + ids;
    cmp.textContent = picked.length >= 2 ? 'compare ' + picked.length + ' (baseline ' + picked[0] + ')' : 'compare picked';
  }
  heads.forEach(h => {
    if (!h.dataset.key) return;
    h.addEventListener('click', () => {
      sort = { key: h.dataset.key, dir: sort.key === h.dataset.key && sort.dir === 'descending' ? 'ascending' : 'descending' };
      apply();
      save();
    });
  });
  filter.addEventListener('input', () => { apply(); save(); });
  body.addEventListener('change', e => {
    const box = e.target;
    if (!box.classList.contains('pick')) return;
    const at = picked.indexOf(box.value);
    if (box.checked && at < 0) picked.push(box.value);
    if (!box.checked && at >= 0) picked.splice(at, 1);
    links();
  });
  state();
  apply();
})();
"#;
