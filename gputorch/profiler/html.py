"""The HTML report: one self-contained page (inline SVG and JavaScript, no network access).

An interactive stacked timeline of bytes per category (hover for the values at a point, drag to
zoom, double-click to zoom out, click a legend entry to hide a category, switch the x axis
between time and event order), with phases as a coloured band and step boundaries as lines, and
below it, on the same x axis, the training curves recorded by ``MemoryProfiler.add_scalar``; then
the tables of the printed report, with the autograd graph at its fullest drawn between them
(``graph_view.py``).
"""
import html
import json

from ._format import communication_rows, format_bytes
from .categories import CATEGORIES
from .graph_view import graph_panel
from .views import GAP_NOTES

__all__ = ["render"]

MAX_POINTS = 20_000
COLORS = {"parameters": "#4e79a7", "buffers": "#76b7b2", "gradients": "#f28e2c", "optimizer_state": "#e15759",
          "communication": "#b07aa1", "activations": "#59a14f", "temporaries": "#edc949", "other": "#bab0ab"}
CURVE_HEIGHT = 120      # pixels per training curve under the timeline
CURVE_COLORS = ("#4e79a7", "#e15759", "#59a14f", "#b07aa1", "#f28e2c")
PHASE_COLORS = {"forward": "#a0cbe8", "backward": "#ffbe7d", "optimizer": "#ff9d9a", "other": "#e0e0e0"}


def _thin(samples):
    """At most MAX_POINTS samples: the one with the highest total in each bucket."""
    if len(samples) <= MAX_POINTS:
        return samples
    size = len(samples) / MAX_POINTS
    out = []
    for b in range(MAX_POINTS):
        bucket = samples[int(b * size):int((b + 1) * size)]
        if bucket:
            out.append(max(bucket, key=lambda s: sum(s[c] for c in CATEGORIES)))
    return out


def _table(header, rows, cls=""):
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _module(path):
    return "<no module>" if path is None else ("<model>" if path == "" else path)


def render(report):
    samples = _thin(report.timeline)
    data = {"categories": list(CATEGORIES), "colors": COLORS, "phaseColors": PHASE_COLORS,
            "curveHeight": CURVE_HEIGHT, "curveColors": CURVE_COLORS,
            "samples": [[s["t"], s["step"], s["phase"]] + [s[c] for c in CATEGORIES] for s in samples],
            "peak": {"bytes": report.peak_bytes, "t": report.peak_time}, "scalars": report.scalars,
            "comm": [[m["start"], m["end"] if m["end"] is not None else m["start"], m["name"]]
                     for m in report.communication]}
    cat_rows = [(c, format_bytes(report.peak[c]), format_bytes(report.current[c]),
                 format_bytes(report.category_peaks[c])) for c in CATEGORIES]
    cat_rows.append(("total", format_bytes(report.peak_bytes), format_bytes(report.current_bytes), ""))
    used = [c for c in CATEGORIES if any(m[c] for m in report.by_module.values())]
    mod_rows = [[report.module_label(p)] + [format_bytes(cats[c]) for c in used] + [format_bytes(sum(cats.values()))]
                for p, cats in sorted(report.by_module.items(), key=lambda kv: -sum(kv[1].values()))]
    largest = [(format_bytes(d["bytes"]), d["category"], "x".join(map(str, d["shape"])) or "scalar", d["dtype"],
                d["device"], d["op"], d["name"] or _module(d["module"]), d["step"], d["phase"]) for d in report.largest]
    ckpt = [(p, format_bytes(b), format_bytes(report.checkpoint_savings_at_peak.get(p, 0)))
            for p, b in sorted(report.checkpoint_savings.items(), key=lambda kv: -kv[1]) if p != ""]
    leaks = [(leak["kind"], leak["step"], format_bytes(leak["bytes"]), leak["message"]) for leak in report.leaks]
    views = []
    for name, view in (report.views or {}).items():
        alloc = view.get("allocator") or {}
        dev = view.get("device") or {}
        views.append((name, format_bytes(sum(report.current_by_device.get(name, {}).values())),
                      format_bytes(alloc.get("used")), format_bytes(alloc.get("total")),
                      format_bytes(alloc.get("peak_used")), format_bytes(alloc.get("peak_total")),
                      format_bytes(dev.get("process")), format_bytes(dev.get("used")), format_bytes(dev.get("total"))))
    parts = [
        f"<h1>gputorch memory profile</h1><p>{report.steps} optimizer step(s) in {report.duration:.3f} s. "
        f"Peak <b>{format_bytes(report.peak_bytes)}</b> tracked in step {report.peak_step}, phase "
        f"<b>{html.escape(report.peak_phase)}</b> (t = {report.peak_time:.4f} s).</p>",
        '<div id="controls"><label><input type="radio" name="x" value="time" checked> time</label> '
        '<label><input type="radio" name="x" value="index"> event order</label> '
        '<span class="hint">hover: values; drag: zoom; double-click: zoom out; legend: show/hide</span></div>',
        '<div id="legend"></div><svg id="chart" width="1100" height="420"></svg><div id="tip"></div>',
        (f'<h2>Training curves</h2><svg id="curves" width="1100" height="{CURVE_HEIGHT * len(report.scalars)}">'
         '</svg>' if report.scalars else ""),
        "<h2>Categories</h2>" + _table(["category", "at peak", "now", "own max"], cat_rows),
        "<h2>Modules at the peak</h2><p>Bytes attributed to each module itself (parameters, buffers, "
        "gradients and optimizer state to their parameter's module; anything else to the module running "
        "when it was made, and what a backward pass makes to the module whose forward recorded the node "
        "that made it).</p>" + _table(["module"] + used + ["total"], mod_rows),
        graph_panel(report),
        "<h2>Largest tensors at the peak</h2>" + _table(
            ["bytes", "category", "shape", "dtype", "device", "op", "module / name", "step", "phase"], largest),
    ]
    if ckpt:
        parts.append("<h2>What checkpointing a module would free</h2><p>Activations held only for the "
                     "module's own ops, at the activation peak and at the total peak.</p>"
                     + _table(["module", "at the activation peak", "at the total peak"], ckpt))
    if report.communication:
        parts.append("<h2>Communication</h2><p>Collectives posted while profiling (purple on the time axis "
                     "of the chart, from posting to completion).</p>" + _table(
                         ["operation", "count", "bytes", "seconds in flight"], communication_rows(report.communication)))
    parts.append("<h2>Leak check</h2>" + (_table(["kind", "step", "bytes", "finding"], leaks, "wide") if leaks
                                          else "<p>Nothing found.</p>"))
    if views:
        parts.append("<h2>GPU memory: three views</h2>" + _table(
            ["device", "tracked now", "allocator used", "allocator total", "allocator peak used",
             "allocator peak total", "process (NVML)", "GPU used (NVML)", "GPU total (NVML)"], views)
            + "<ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in GAP_NOTES) + "</ul>")
    payload = json.dumps(data).replace("</", "<\\/")
    return _PAGE.replace("__BODY__", "\n".join(parts)).replace("__DATA__", payload)


_PAGE = r"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>gputorch memory profile</title>
<style>
body{font-family:system-ui,sans-serif;margin:20px;color:#222}
table{border-collapse:collapse;margin:6px 0 18px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
td:first-child,th:first-child{text-align:left}table.wide td:last-child{text-align:left;max-width:700px}
#legend span{display:inline-block;margin-right:14px;cursor:pointer;user-select:none}
#legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px}
#legend span.off{opacity:.35}#tip{position:absolute;background:#fff;border:1px solid #888;padding:4px 8px;
font-size:12px;pointer-events:none;display:none;white-space:pre}.hint{color:#777;font-size:12px;margin-left:12px}
svg{user-select:none}
.graph{overflow:auto;max-height:900px;border:1px solid #ddd;margin:6px 0 18px}.graph svg{user-select:auto}
pre.dot{max-height:300px;overflow:auto;background:#f6f6f6;padding:6px;font-size:11px}.note{color:#8a5a00}
</style></head><body>
__BODY__
<script>
const D = __DATA__;
(function () {
  const svg = document.getElementById('chart'), tip = document.getElementById('tip');
  const NS = 'http://www.w3.org/2000/svg', W = 1100, H = 420, L = 80, R = 20, T = 10, B = 60, BAND = 14;
  const cats = D.categories, S = D.samples, hidden = {};
  let xmode = 'time', view = null;
  function fmt(n) {
    const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB']; let i = 0;
    while (Math.abs(n) >= 1024 && i < u.length - 1) { n /= 1024; i++; }
    return (i ? n.toFixed(2) : n) + ' ' + u[i];
  }
  function el(name, attrs, parent) {
    const e = document.createElementNS(NS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    (parent || svg).appendChild(e); return e;
  }
  function xval(i) { return xmode === 'time' ? S[i][0] : i; }
  function total(i) { let s = 0; cats.forEach((c, k) => { if (!hidden[c]) s += S[i][3 + k]; }); return s; }
  // Samples grouped by pixel column. In each column the sample with the largest shown total fills
  // the column, so a spike shorter than a pixel (a temporary that lives a few microseconds) stays
  // visible and reaches the peak the y axis is scaled to; the column's last sample then holds until
  // the next column that has samples. Returns the kept sample indices and the pixel x where each
  // starts, with one more x where the last one ends.
  function columns(idx, x0, span) {
    const n = W - L - R, kept = [], xs = [];
    const col = i => Math.min(Math.max(Math.floor((xval(i) - x0) / span * n), 0), n - 1);
    let j = 0, c = 0;
    while (j < idx.length) {
      c = col(idx[j]);
      let best = idx[j], bestTotal = total(best), last = best;
      for (j++; j < idx.length && col(idx[j]) === c; j++) {
        last = idx[j];
        const t = total(last);
        if (t > bestTotal) { best = last; bestTotal = t; }
      }
      kept.push(best); xs.push(L + c);
      if (last !== best) { kept.push(last); xs.push(L + c + 1); }
    }
    xs.push(kept.length ? Math.max(L + c + 1, xs[xs.length - 1]) : L);
    return [kept, xs];
  }
  function draw() {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    if (!S.length) { el('text', {x: L, y: 40}).textContent = 'no samples'; return; }
    const x0 = view ? view[0] : xval(0), x1 = view ? view[1] : xval(S.length - 1);
    const span = (x1 - x0) || 1;
    let idx = []; for (let i = 0; i < S.length; i++) { const x = xval(i); if (x >= x0 && x <= x1) idx.push(i); }
    const steps = idx.length ? S[idx[idx.length - 1]][1] - S[idx[0]][1] : 0;  // boundaries shown
    let xs; [idx, xs] = columns(idx, x0, span);
    let ymax = 1;
    for (const i of idx) ymax = Math.max(ymax, total(i));
    const px = x => L + (x - x0) / span * (W - L - R), py = y => T + (1 - y / ymax) * (H - T - B);
    for (let g = 0; g <= 4; g++) {
      const y = ymax * g / 4;
      el('line', {x1: L, x2: W - R, y1: py(y), y2: py(y), stroke: '#eee'});
      el('text', {x: L - 6, y: py(y) + 4, 'text-anchor': 'end', 'font-size': 11}).textContent = fmt(Math.round(y));
    }
    const base = idx.map(() => 0);
    cats.forEach((c, k) => {
      if (hidden[c]) return;
      const top = [], bot = [];
      idx.forEach((i, j) => {     // values hold until the next event: a step-shaped area
        const xa = xs[j], xb = xs[j + 1];
        const b = base[j], t = b + S[i][3 + k];
        top.push(xa + ',' + py(t), xb + ',' + py(t));
        bot.push(xa + ',' + py(b), xb + ',' + py(b));
        base[j] = t;
      });
      el('polygon', {points: top.concat(bot.reverse()).join(' '), fill: D.colors[c], 'fill-opacity': 0.85});
    });
    // phases band and step lines; communication (collectives in flight) as a purple strip above it
    const yb = H - B + 8;
    if (xmode === 'time') for (const [a, b, name] of D.comm) {
      if (b < x0 || a > x1) continue;
      const xa = px(Math.max(a, x0)), xb = px(Math.min(b, x1));
      el('rect', {x: xa, y: yb - 5, width: Math.max(xb - xa, 1), height: 4, fill: '#b07aa1'})
        .appendChild(document.createElementNS('http://www.w3.org/2000/svg', 'title')).textContent = name;
    }
    const stepLines = steps <= (W - L - R) / 6;   // denser lines would hide the data
    for (let j = 0; j < idx.length; j++) {
      const i = idx[j], xa = xs[j], xb = j + 1 < idx.length ? xs[j + 1] : W - R;
      el('rect', {x: xa, y: yb, width: Math.max(xb - xa, 0.5), height: BAND, fill: D.phaseColors[S[i][2]] || '#ccc'});
      if (stepLines && j > 0 && S[i][1] !== S[idx[j - 1]][1])
        el('line', {x1: xa, x2: xa, y1: T, y2: yb + BAND, stroke: '#555', 'stroke-dasharray': '3,3'});
    }
    let lx = L; for (const p in D.phaseColors) {
      el('rect', {x: lx, y: H - 22, width: 10, height: 10, fill: D.phaseColors[p]});
      el('text', {x: lx + 14, y: H - 13, 'font-size': 11}).textContent = p; lx += 90;
    }
    el('text', {x: W - R, y: H - 13, 'text-anchor': 'end', 'font-size': 11}).textContent =
      (xmode === 'time' ? 'seconds ' + x0.toFixed(4) + ' .. ' + x1.toFixed(4) : 'events ' + x0 + ' .. ' + x1) +
      (stepLines ? '   (dashed: step boundary)' : '   (' + steps + ' steps: zoom in to see their boundaries)');
    const allShown = !Object.keys(hidden).some(k => hidden[k]);
    if (D.peak.bytes > 0 && xmode === 'time' && D.peak.t >= x0 && D.peak.t <= x1 && allShown)
      el('circle', {cx: px(D.peak.t), cy: py(D.peak.bytes), r: 4, fill: 'none', stroke: '#000'});
    const cursor = el('line', {x1: 0, x2: 0, y1: T, y2: H - B, stroke: '#000', visibility: 'hidden'});
    const brush = el('rect', {x: 0, y: T, width: 0, height: H - T - B, fill: '#000', 'fill-opacity': 0.1});
    const overlay = el('rect', {x: L, y: T, width: W - L - R, height: H - T - B, fill: 'transparent'});
    let drag = null;
    function nearest(evt) {
      const r = svg.getBoundingClientRect(), mx = evt.clientX - r.left;
      const xv = x0 + (mx - L) / (W - L - R) * span;
      let best = idx[0];
      for (const i of idx) if (Math.abs(xval(i) - xv) < Math.abs(xval(best) - xv)) best = i;
      return [best, mx, xv];
    }
    overlay.addEventListener('mousemove', evt => {
      const [i, mx] = nearest(evt);
      cursor.setAttribute('x1', px(xval(i)));
      cursor.setAttribute('x2', px(xval(i)));
      cursor.setAttribute('visibility', 'visible');
      let total = 0, lines = [];
      cats.forEach((c, k) => { total += S[i][3 + k]; if (S[i][3 + k]) lines.push(c + ': ' + fmt(S[i][3 + k])); });
      tip.textContent = 't = ' + S[i][0].toFixed(5) + ' s, step ' + S[i][1] + ', ' + S[i][2] +
        '\ntotal: ' + fmt(total) + '\n' + lines.join('\n');
      tip.style.display = 'block'; tip.style.left = (evt.pageX + 14) + 'px'; tip.style.top = (evt.pageY + 10) + 'px';
      if (drag !== null) {
        brush.setAttribute('x', Math.min(drag[0], mx));
        brush.setAttribute('width', Math.abs(mx - drag[0]));
      }
    });
    overlay.addEventListener('mouseleave', () => {
      tip.style.display = 'none';
      cursor.setAttribute('visibility', 'hidden');
    });
    overlay.addEventListener('mousedown', evt => { const [, mx, xv] = nearest(evt); drag = [mx, xv]; });
    overlay.addEventListener('mouseup', evt => {
      if (drag === null) return; const [, mx, xv] = nearest(evt);
      if (Math.abs(mx - drag[0]) > 4) view = [Math.min(drag[1], xv), Math.max(drag[1], xv)];
      drag = null; draw();
    });
    overlay.addEventListener('dblclick', () => { view = null; draw(); });
    drawCurves(x0, x1, span);
  }
  // The training curves (MemoryProfiler.add_scalar) on the chart's x axis: seconds, or in event
  // order the index of the first sample at or after each point's time.
  function sampleAt(t) {
    let lo = 0, hi = S.length - 1;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (S[mid][0] < t) lo = mid + 1; else hi = mid; }
    return lo;
  }
  function drawCurves(x0, x1, span) {
    const cs = document.getElementById('curves');
    if (!cs) return;
    while (cs.firstChild) cs.removeChild(cs.firstChild);
    // unzoomed, points after the last memory sample sit at the right edge
    const CH = D.curveHeight, px = x => Math.min(L + (x - x0) / span * (W - L - R), W - R);
    Object.keys(D.scalars).forEach((name, k) => {
      const top = k * CH + 18, h = CH - 34, color = D.curveColors[k % D.curveColors.length];
      const pts = D.scalars[name].map(p => [xmode === 'time' ? p[0] : sampleAt(p[0]), p[2], p[1]])
        .filter(q => view === null || (q[0] >= x0 && q[0] <= x1));
      let lo = Infinity, hi = -Infinity;
      for (const q of pts) { lo = Math.min(lo, q[1]); hi = Math.max(hi, q[1]); }
      if (!pts.length) { lo = 0; hi = 1; } else if (hi === lo) { hi = lo + 1; }
      const py = v => top + (1 - (v - lo) / (hi - lo)) * h;
      el('text', {x: L, y: top - 5, 'font-size': 12, fill: color}, cs).textContent = name;
      el('line', {x1: L, x2: W - R, y1: top + h, y2: top + h, stroke: '#ccc'}, cs);
      for (const v of [lo, hi])
        el('text', {x: L - 6, y: py(v) + 4, 'text-anchor': 'end', 'font-size': 11}, cs).textContent = +v.toPrecision(4);
      el('polyline', {points: pts.map(q => px(q[0]) + ',' + py(q[1])).join(' '), fill: 'none', stroke: color,
                      'stroke-width': 1.5}, cs);
      for (const q of pts)
        el('circle', {cx: px(q[0]), cy: py(q[1]), r: 2.5, fill: color}, cs)
          .appendChild(document.createElementNS(NS, 'title')).textContent = name + ' ' + q[1] + ' (step ' + q[2] + ')';
    });
  }
  const legend = document.getElementById('legend');
  cats.forEach(c => {
    const s = document.createElement('span'); s.innerHTML = '<i style="background:' + D.colors[c] + '"></i>' + c;
    s.onclick = () => { hidden[c] = !hidden[c]; s.className = hidden[c] ? 'off' : ''; draw(); };
    legend.appendChild(s);
  });
  document.querySelectorAll('input[name=x]').forEach(r => r.onchange = () => { xmode = r.value; view = null; draw(); });
  draw();
})();
</script></body></html>
"""
