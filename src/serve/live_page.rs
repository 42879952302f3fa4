//! `/live/ID`: a run as it goes. The page reads the run's interval file from where it last
//! stopped (`/runs/ID/intervals.jsonl?from=N`) every second and draws what came: throughput,
//! response time and CPU per interval across the trials, and a table of the trials with their
//! totals. It stops asking once the `end` line has come, and then links the report. A finished
//! run replays the same way, at once.
//!
//! The script builds the page's elements with `textContent` and SVG nodes, never by parsing
//! text as HTML, so nothing in a record (a target, a warning) can become markup.

use super::page::page;
use crate::http::Response;
use crate::report::html::escape;

pub fn page_of(id: &str) -> Response {
    let body = format!(
        concat!(
            "<header class=\"doc\"><h1>Run {id}</h1>",
            "<p class=\"sub\" id=\"what\">waiting for the run's first lines</p>",
            "<p id=\"status\" class=\"muted\"></p></header>\n",
            "<div class=\"charts\">",
            "<figure><svg id=\"rate\" viewBox=\"0 0 640 280\" role=\"img\"></svg><figcaption>Throughput per interval; the dashed lines are trials' starts.</figcaption></figure>",
            "<figure><svg id=\"latency\" viewBox=\"0 0 640 280\" role=\"img\"></svg><figcaption>Response time per interval: median and 99th percentile.</figcaption></figure>",
            "<figure><svg id=\"cpu\" viewBox=\"0 0 640 280\" role=\"img\"></svg><figcaption>CPU busy (all CPUs) and perflab's own, per sampler reading.</figcaption></figure>",
            "</div>\n",
            "<h3>Trials</h3>\n<div class=\"table\"><table id=\"trials\"><thead><tr>",
            "<th>step</th><th>repeat</th><th>parameters</th><th class=\"n\">ops/s</th><th class=\"n\">mean</th>",
            "<th class=\"n\">p50</th><th class=\"n\">p99</th><th class=\"n\">errors</th><th>state</th>",
            "</tr></thead><tbody></tbody></table></div>\n",
            "<ul class=\"warnings\" id=\"warnings\" hidden></ul>\n",
            "<script type=\"application/json\" id=\"run-id\">{json}</script>\n"
        ),
        id = escape(id),
        json = serde_json::to_string(id)
            .unwrap_or_default()
            .replace('<', "\\u003c"),
    );
    page(&format!("perflab: live {id}"), "live", &body, Some(SCRIPT))
}

/// Polls the interval file and draws. Charts are drawn whole on each change: a few thousand
/// points at most, redrawn once a second.
const SCRIPT: &str = r#"
(function () {
  const id = JSON.parse(document.getElementById('run-id').textContent);
  const s = { run: null, trials: [], warnings: [], ended: null, lastLine: 0 };
  let from = 0;
  const NS = 'http://www.w3.org/2000/svg';

  function el(tag, attrs, text) {
    const e = tag.startsWith('svg:') ? document.createElementNS(NS, tag.slice(4)) : document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function si(v) {
    if (!isFinite(v)) return '-';
    const a = Math.abs(v);
    if (a >= 1e9) return (v / 1e9).toPrecision(3) + 'G';
    if (a >= 1e6) return (v / 1e6).toPrecision(3) + 'M';
    if (a >= 1e3) return (v / 1e3).toPrecision(3) + 'k';
    return a >= 100 || a === 0 ? v.toFixed(0) : String(Number(v.toPrecision(3)));
  }
  function dur(ns) {
    if (!isFinite(ns)) return '-';
    if (ns >= 1e9) return (ns / 1e9).toPrecision(3) + ' s';
    if (ns >= 1e6) return (ns / 1e6).toPrecision(3) + ' ms';
    if (ns >= 1e3) return (ns / 1e3).toPrecision(3) + ' µs';
    return ns.toFixed(0) + ' ns';
  }
  function params(p) {
    return Object.keys(p || {}).map(k => k + '=' + p[k]).join(', ');
  }
  function trial(ev) {
    for (let i = s.trials.length - 1; i >= 0; i--) {
      const t = s.trials[i];
      if (t.step === ev.step && t.repeat === ev.repeat) return t;
    }
    const t = { step: ev.step, repeat: ev.repeat, params: ev.params || {}, iv: [], res: [], end: null };
    s.trials.push(t);
    return t;
  }
  function take(ev) {
    switch (ev.event) {
      case 'run': s.run = ev; break;
      case 'trial': s.trials.push({ step: ev.step, repeat: ev.repeat, params: ev.params || {}, iv: [], res: [], end: null }); break;
      case 'interval': trial(ev).iv.push(ev); break;
      case 'resources': trial(ev).res.push(ev); break;
      case 'trial_end': trial(ev).end = ev; break;
      case 'warning': s.warnings.push(ev.message); break;
      case 'end': s.ended = ev; break;
    }
  }

  // The trials laid end to end: each one's measure time after the previous ones'.
  function series() {
    const out = { rate: [], p50: [], p99: [], cpu: [], own: [], marks: [] };
    let offset = 0;
    s.trials.forEach(t => {
      out.marks.push({ x: offset, label: params(t.params) || 'step ' + t.step });
      let end = 0;
      t.iv.forEach(p => {
        const x = (offset + p.start_ns + p.duration_ns / 2) / 1e9;
        out.rate.push([x, p.ops_per_sec]);
        // An interval with nothing timed (latency_count 0: fio's gtod_reduce) has no latency.
        if (p.ops > 0 && p.latency_count !== 0) { out.p50.push([x, p.p50_ns]); out.p99.push([x, p.p99_ns]); }
        end = Math.max(end, p.start_ns + p.duration_ns);
      });
      t.res.forEach(r => {
        const x = (offset + r.start_ns + r.duration_ns / 2) / 1e9;
        const c = r.cpu || {};
        out.cpu.push([x, Math.max(0, 100 - (c.idle || 0) - (c.iowait || 0))]);
        out.own.push([x, r.process_cpu_pct / Math.max(1, (r.per_cpu || []).length)]);
        end = Math.max(end, r.start_ns + r.duration_ns);
      });
      offset += end;
    });
    out.marks = out.marks.map(m => ({ x: m.x / 1e9, label: m.label }));
    out.span = offset / 1e9;
    return out;
  }
  function ticks(max, n) {
    if (!(max > 0)) return [0, 1];
    const raw = max / n, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 2.5, 5, 10].map(f => f * mag).find(x => x >= raw);
    const out = [];
    for (let v = 0; v <= max + step * 1e-9; v += step) out.push(v);
    if (out[out.length - 1] < max) out.push(out[out.length - 1] + step);
    return out;
  }
  function chart(svg, title, unit, lines, marks, span) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    const W = 640, H = 280, L = 62, R = 14, T = 26, B = 34;
    svg.appendChild(el('svg:text', { x: L, y: 16, 'font-size': 13, 'font-weight': 600 }, title));
    const all = lines.flatMap(l => l.points);
    if (!all.length) {
      svg.appendChild(el('svg:text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', fill: '#5b6473', 'font-size': 12 }, 'no intervals yet'));
      return;
    }
    const xs = ticks(Math.max(span, ...all.map(p => p[0])), 6);
    const ys = ticks(Math.max(...all.map(p => p[1])), 4);
    const xmax = xs[xs.length - 1], ymax = ys[ys.length - 1];
    const X = v => L + (W - L - R) * v / xmax, Y = v => H - B - (H - T - B) * v / ymax;
    ys.forEach(v => {
      svg.appendChild(el('svg:line', { x1: L, x2: W - R, y1: Y(v), y2: Y(v), stroke: '#d9dee5' }));
      svg.appendChild(el('svg:text', { x: L - 6, y: Y(v) + 4, 'text-anchor': 'end', 'font-size': 11, fill: '#5b6473' }, si(v)));
    });
    xs.forEach(v => svg.appendChild(el('svg:text', { x: X(v), y: H - B + 16, 'text-anchor': 'middle', 'font-size': 11, fill: '#5b6473' }, si(v))));
    svg.appendChild(el('svg:text', { x: W - R, y: H - 4, 'text-anchor': 'end', 'font-size': 11, fill: '#5b6473' }, 'seconds measured'));
    svg.appendChild(el('svg:text', { x: 4, y: T - 8, 'font-size': 11, fill: '#5b6473' }, unit));
    marks.forEach(m => {
      svg.appendChild(el('svg:line', { x1: X(m.x), x2: X(m.x), y1: T, y2: H - B, stroke: '#9aa3ad', 'stroke-dasharray': '3 3' }));
      if (marks.length <= 12) svg.appendChild(el('svg:text', { x: X(m.x) + 3, y: T + 10, 'font-size': 10, fill: '#5b6473' }, m.label));
    });
    lines.forEach((l, i) => {
      if (!l.points.length) return;
      const d = l.points.map((p, j) => (j ? 'L' : 'M') + X(p[0]).toFixed(1) + ' ' + Y(p[1]).toFixed(1)).join(' ');
      svg.appendChild(el('svg:path', { d: d, fill: 'none', stroke: l.color, 'stroke-width': 1.6, class: 'line' }));
      svg.appendChild(el('svg:text', { x: W - R - 4, y: T + 12 + 14 * i, 'text-anchor': 'end', 'font-size': 11, fill: l.color }, l.name));
    });
  }
  function table() {
    const body = document.querySelector('#trials tbody');
    while (body.firstChild) body.removeChild(body.firstChild);
    s.trials.forEach(t => {
      const e = t.end, lat = e && e.latency;
      const last = t.iv[t.iv.length - 1];
      const cells = [
        [t.step, ''], [t.repeat, ''], [params(t.params), ''],
        [e ? si(e.ops_per_sec) : last ? si(last.ops_per_sec) + ' now' : '-', 'n'],
        [lat ? dur(lat.mean_ns) : '-', 'n'], [lat ? dur(lat.p50_ns) : '-', 'n'], [lat ? dur(lat.p99_ns) : '-', 'n'],
        [e ? String(e.errors) : '-', 'n'], [e ? 'done' : 'running', ''],
      ];
      const tr = el('tr');
      cells.forEach(c => tr.appendChild(el('td', c[1] ? { class: c[1] } : {}, String(c[0]))));
      body.appendChild(tr);
    });
  }
  function draw() {
    const r = s.run;
    if (r) {
      document.getElementById('what').textContent = r.workload + ' on ' + r.target + ', ' + r.steps + ' step' + (r.steps === 1 ? '' : 's') + ', started ' + r.started_at;
    }
    const d = series();
    const unit = r && r.op_name ? r.op_name + '/s' : 'ops/s';
    chart(document.getElementById('rate'), 'Throughput', unit, [{ name: unit, color: '#0b57a4', points: d.rate }], d.marks, d.span);
    // Response times in the unit that suits the largest (ns to s).
    const top = Math.max(0, ...d.p99.map(p => p[1]));
    const [scale, tunit] = top >= 1e9 ? [1e9, 's'] : top >= 1e6 ? [1e6, 'ms'] : top >= 1e3 ? [1e3, 'µs'] : [1, 'ns'];
    const scaled = pts => pts.map(p => [p[0], p[1] / scale]);
    chart(document.getElementById('latency'), 'Response time', tunit, [
      { name: 'p50', color: '#1b6b2c', points: scaled(d.p50) }, { name: 'p99', color: '#b3261e', points: scaled(d.p99) }], d.marks, d.span);
    chart(document.getElementById('cpu'), 'CPU', '%', [
      { name: 'busy', color: '#8a4b00', points: d.cpu }, { name: 'perflab', color: '#5b6473', points: d.own }], d.marks, d.span);
    table();
    const w = document.getElementById('warnings');
    while (w.firstChild) w.removeChild(w.firstChild);
    s.warnings.forEach(m => w.appendChild(el('li', {}, m)));
    w.hidden = !s.warnings.length;
    const st = document.getElementById('status');
    while (st.firstChild) st.removeChild(st.firstChild);
    if (s.ended) {
      st.appendChild(document.createTextNode('ended ' + s.ended.status + (s.ended.finished_at ? ' at ' + s.ended.finished_at : '') + ': '));
      st.appendChild(el('a', { href: '/runs/' + encodeURIComponent(id) }, 'the report'));
      st.dataset.state = 'ended';
    } else if (s.lastLine) {
      const quiet = Math.round((Date.now() - s.lastLine) / 1000);
      const t = s.trials[s.trials.length - 1];
      st.textContent = 'running' + (t ? ': step ' + (t.step + 1) + (r ? ' of ' + r.steps : '') + (params(t.params) ? ' (' + params(t.params) + ')' : '') : '') +
        (quiet > 30 ? '; nothing new for ' + quiet + ' s (a warm-up or a load, or the run was stopped)' : '');
      st.dataset.state = 'running';
    } else {
      st.textContent = 'no lines yet: the run has not begun measuring, or it was recorded before interval files existed';
    }
  }
  async function poll() {
    let more = false;
    try {
      const r = await fetch('/runs/' + encodeURIComponent(id) + '/intervals.jsonl?from=' + from, { cache: 'no-store' });
      if (!r.ok) throw new Error('HTTP ' + r.status);
      const next = parseInt(r.headers.get('X-Perflab-Next') || String(from), 10);
      const text = await r.text();
      from = next;
      if (text) {
        text.split('\n').forEach(l => { if (l) { try { take(JSON.parse(l)); } catch (e) { } } });
        s.lastLine = Date.now();
        more = true;
      }
      draw();
    } catch (e) {
      document.getElementById('status').textContent = 'cannot read the run from perflab serve (' + e.message + '); retrying';
    }
    if (!s.ended) setTimeout(poll, more ? 50 : 1000);
  }
  draw();
  poll();
})();
"#;
