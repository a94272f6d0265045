// KernelFleet dashboard page.  Reads /api/... (JSON from the coordinator's
// read RPCs, with this session's credential) and draws the tables and SVG
// charts.  Everything from the store -- names, reasons, sources -- is
// hostile: it only ever becomes text (textContent, createTextNode,
// setAttribute on our own attributes), never markup.  No innerHTML here.
'use strict';

const SVGNS = 'http://www.w3.org/2000/svg';
const COLORS = ['#1f6feb', '#d1242f', '#1a7f37', '#8250df', '#bf8700', '#0a7ea4'];
const REFRESH_MS = 5000;
let selected = null;
let listed = [];  // the last /api/campaigns answer
let timer = null;

function el(tag, attrs, ...kids) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) n.setAttribute(k, String(v));
  for (const k of kids) n.append(k instanceof Node ? k : document.createTextNode(String(k)));
  return n;
}

function sv(tag, attrs, text) {
  const n = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) n.setAttribute(k, String(v));
  if (text !== undefined) n.textContent = String(text);
  return n;
}

function clear(n) { while (n.firstChild) n.removeChild(n.firstChild); }

async function api(path) {
  const r = await fetch('/api/' + path, {credentials: 'same-origin', cache: 'no-store'});
  if (r.status === 401) { window.location.assign('/login'); throw new Error('logged out'); }
  const j = await r.json();
  if (!r.ok) throw new Error((j.error || r.status) + (j.detail ? ': ' + j.detail : ''));
  return j;
}

function fmtNum(x, digits) { return x ? Number(x).toFixed(digits) : '—'; }
function fmtPct(x) { return x ? (100 * x).toFixed(1) + '%' : '—'; }
function fmtTime(ns) {
  if (!ns) return '—';
  if (ns >= 1e6) return (ns / 1e6).toFixed(2) + ' ms';
  if (ns >= 1e3) return (ns / 1e3).toFixed(2) + ' µs';
  return ns.toFixed(0) + ' ns';
}
function fmtDur(ms) {
  const s = Math.round(ms / 1000);
  return s >= 60 ? Math.floor(s / 60) + ' min ' + (s % 60) + ' s' : s + ' s';
}

// ------------------------------------------------------------ campaigns --

// The rows are rebuilt only when what they show changed: a rebuild between
// a click's press and its release (a refresh lands every few seconds) puts
// the two on different elements, and the browser then sends no click.
let shownCampaigns = '';

function renderCampaigns(list) {
  const key = JSON.stringify([selected, list.campaigns]);
  if (key === shownCampaigns) return list.campaigns;
  shownCampaigns = key;
  const tb = document.querySelector('#campaigns tbody');
  clear(tb);
  for (const c of list.campaigns) {
    const frac = c.budget_evals ? Math.min(1, c.evals_done / c.budget_evals) : 0;
    const bar = el('span', {class: 'bar'}, el('span', {style: ''}));
    bar.firstChild.style.width = (100 * frac).toFixed(0) + '%';
    const classes = el('div', {class: 'classes'});
    for (const k of c.classes || []) {
      classes.append(el('div', {class: 'class-progress'},
        k.device_class + ': ' + k.evals_done + ' evals, ' + k.evals_ok + ' ok, best ' +
        fmtNum(k.best_speedup, 2) + 'x, ' + fmtPct(k.best_roofline_fraction) + ' of roofline'));
    }
    const tr = el('tr', {'data-id': c.id},
      el('td', {class: 'num'}, c.id),
      el('td', {class: 'name'}, c.name),
      el('td', {}, c.problem),
      el('td', {class: 'state'}, c.state + (c.stop_reason ? ' (' + c.stop_reason + ')' : '')),
      el('td', {}, bar, c.evals_done + ' / ' + c.budget_evals),
      el('td', {class: 'num'}, c.evals_ok),
      el('td', {class: 'num'}, c.evals_running),
      el('td', {class: 'num'}, c.best_speedup ? c.best_speedup.toFixed(2) + 'x' : '—'),
      el('td', {class: 'num'}, fmtPct(c.best_roofline_fraction)),
      el('td', {}, classes));
    if (c.id === selected) tr.classList.add('selected');
    tr.addEventListener('click', () => select(c.id));
    tb.append(tr);
  }
  return list.campaigns;
}

// --------------------------------------------------------------- charts --

// Axes and a plotting transform for x in [0, xmax] and y in [0, ymax], or
// y in [ylo, ymax] on a log scale when ylo > 0 (the roofline: a CPU
// candidate at 0.1 GB/s under a 3 GB/s ceiling is still a point one can see).
function frame(svg, xmax, ymax, xlabel, ylabel, ylo) {
  clear(svg);
  const W = 560, H = 260, L = 52, R = 12, T = 12, B = 36;
  const log = ylo > 0 && ymax > ylo;
  const X = x => L + (W - L - R) * (xmax ? x / xmax : 0);
  const frac = y => log ? (Math.log10(Math.max(y, ylo)) - Math.log10(ylo)) /
                          (Math.log10(ymax) - Math.log10(ylo))
                        : (ymax ? y / ymax : 0);
  const Y = y => H - B - (H - T - B) * frac(y);
  const yticks = [];
  if (log) {
    for (let e = Math.ceil(Math.log10(ylo)); e <= Math.floor(Math.log10(ymax)); e++) yticks.push(10 ** e);
    if (yticks.length < 2) yticks.push(ylo, ymax);
  } else {
    for (let i = 0; i <= 4; i++) yticks.push(ymax * i / 4);
  }
  for (const y of yticks) {
    svg.append(sv('line', {class: 'grid', x1: L, x2: W - R, y1: Y(y), y2: Y(y)}));
    svg.append(sv('text', {x: L - 6, y: Y(y) + 4, 'text-anchor': 'end'}, Number(y.toPrecision(3))));
  }
  for (let i = 0; i <= 4; i++) {
    const x = xmax * i / 4;
    svg.append(sv('text', {x: X(x), y: H - B + 14, 'text-anchor': 'middle'}, x.toFixed(0)));
  }
  svg.append(sv('line', {class: 'axis', x1: L, x2: W - R, y1: H - B, y2: H - B}));
  svg.append(sv('line', {class: 'axis', x1: L, x2: L, y1: T, y2: H - B}));
  svg.append(sv('text', {x: (L + W - R) / 2, y: H - 4, 'text-anchor': 'middle'}, xlabel));
  svg.append(sv('text', {x: 12, y: (T + H - B) / 2, 'text-anchor': 'middle',
                         transform: 'rotate(-90 12 ' + (T + H - B) / 2 + ')'},
                ylabel + (log ? ' (log scale)' : '')));
  return {X, Y, W, H, L, R, T, B};
}

function classColors(points) {
  const m = new Map();
  for (const p of points) if (!m.has(p.device_class)) m.set(p.device_class, COLORS[m.size % COLORS.length]);
  return m;
}

// Class colours, in the top-left corner or (bottom) just above the x axis.
function legend(svg, f, colors, bottom) {
  let i = 0;
  for (const [name, color] of colors) {
    const y = bottom ? f.H - f.B - 8 - 14 * (colors.size - 1 - i++) : f.T + 10 + 14 * i++;
    svg.append(sv('rect', {x: f.L + 8, y: y - 8, width: 10, height: 10, fill: color}));
    svg.append(sv('text', {x: f.L + 22, y: y + 1, class: 'legend'}, name));
  }
}

function drawBest(series) {
  const svg = document.getElementById('best-chart');
  const t0 = series.started_at_ms;
  const pts = series.points;
  const colors = classColors(pts);
  const lines = new Map();  // class -> [[t, best], ...] at each improvement
  let xmax = 1, ymax = 0;
  for (const p of pts) {
    const t = Math.max(0, (p.t_ms - t0) / 1000);
    xmax = Math.max(xmax, t);
    if (p.outcome !== 'ok' || !(p.speedup > 0)) continue;
    const l = lines.get(p.device_class) || [];
    const best = l.length ? l[l.length - 1][1] : 0;
    if (p.speedup > best) { l.push([t, p.speedup]); lines.set(p.device_class, l); }
    ymax = Math.max(ymax, p.speedup);
  }
  const f = frame(svg, xmax, ymax ? ymax * 1.1 : 1, 'seconds since the campaign started', 'best speedup');
  if (ymax >= 1) {
    svg.append(sv('line', {class: 'grid', x1: f.X(0), x2: f.X(xmax), y1: f.Y(1), y2: f.Y(1),
                           'stroke-dasharray': '3 3', stroke: '#999'}));
  }
  for (const [cls, l] of lines) {
    const color = colors.get(cls);
    let d = '';
    l.forEach(([t, y], i) => {
      d += (i ? ' H ' + f.X(t).toFixed(1) + ' V ' : 'M ' + f.X(t).toFixed(1) + ' ') + f.Y(y).toFixed(1);
    });
    d += ' H ' + f.X(xmax).toFixed(1);
    svg.append(sv('path', {class: 'line', d, stroke: color}));
    for (const [t, y] of l) {
      const c = sv('circle', {class: 'pt', cx: f.X(t), cy: f.Y(y), r: 3.5, fill: color});
      c.append(sv('title', {}, cls + ': ' + y.toFixed(3) + 'x at ' + t.toFixed(0) + ' s'));
      svg.append(c);
    }
  }
  if (!lines.size) svg.append(sv('text', {x: 280, y: 120, 'text-anchor': 'middle'}, 'no verified candidate yet'));
  else legend(svg, f, colors, true);
}

function drawRoofline(series) {
  const svg = document.getElementById('roofline-chart');
  const t0 = series.started_at_ms;
  const pts = series.points.filter(p => p.achieved_gbps > 0);
  const colors = classColors(series.points);
  const ceilings = new Map();
  let xmax = 1, ymax = 0, ymin = Infinity;
  for (const p of series.points) {
    if (p.ceiling_gbps > 0) ceilings.set(p.device_class, Math.max(ceilings.get(p.device_class) || 0, p.ceiling_gbps));
  }
  for (const p of pts) {
    xmax = Math.max(xmax, (p.t_ms - t0) / 1000);
    ymax = Math.max(ymax, p.achieved_gbps);
    ymin = Math.min(ymin, p.achieved_gbps);
  }
  for (const c of ceilings.values()) ymax = Math.max(ymax, c);
  // Points far below the ceiling: a log axis from a decade under the
  // slowest one, so they do not all sit on the floor.
  const ylo = pts.length && ymax / ymin > 8 ? 10 ** Math.floor(Math.log10(ymin)) : 0;
  const f = frame(svg, xmax, ymax ? ymax * (ylo ? 1.6 : 1.15) : 1,
                  'seconds since the campaign started', 'achieved GB/s', ylo);
  for (const [cls, c] of ceilings) {
    svg.append(sv('line', {class: 'ceiling', x1: f.X(0), x2: f.X(xmax), y1: f.Y(c), y2: f.Y(c)}));
    svg.append(sv('text', {class: 'ceiling-label', x: f.W - f.R - 4, y: f.Y(c) - 4, 'text-anchor': 'end'},
                  'measured ceiling ' + c.toFixed(1) + ' GB/s — ' + cls));
  }
  for (const p of pts) {
    const t = Math.max(0, (p.t_ms - t0) / 1000);
    const ok = p.outcome === 'ok';
    const c = sv('circle', {class: 'pt' + (ok ? '' : ' fail'), cx: f.X(t), cy: f.Y(p.achieved_gbps), r: 3,
                            fill: ok ? colors.get(p.device_class) : '#bbb', 'fill-opacity': 0.8});
    const ceil = ceilings.get(p.device_class);
    c.append(sv('title', {}, 'candidate ' + p.candidate_id + ': ' + p.achieved_gbps.toFixed(1) + ' GB/s' +
                (ceil ? ' (' + (100 * p.achieved_gbps / ceil).toFixed(0) + '% of the ceiling)' : '')));
    svg.append(c);
  }
  if (!pts.length) svg.append(sv('text', {x: 280, y: 120, 'text-anchor': 'middle'}, 'no bandwidth measured yet'));
  else legend(svg, f, colors);
}

// --------------------------------------------------------------- detail --

function renderDetail(c) {
  document.getElementById('detail').hidden = false;
  document.getElementById('detail-title').textContent = 'Campaign ' + c.id + ': ' + c.name;
  const oc = Object.entries(c.outcomes || {}).map(([k, v]) => k + ' ' + v).join(', ');
  document.getElementById('detail-summary').textContent =
    c.problem + ' — ' + c.state + (c.stop_reason ? ' (' + c.stop_reason + ')' : '') +
    ' — ' + c.evals_done + ' of ' + c.budget_evals + ' evaluations, ' + c.evals_running + ' running, ' +
    fmtDur(c.elapsed_ms) + ' — best ' + (c.best_speedup ? c.best_speedup.toFixed(3) + 'x (' +
    fmtTime(c.best_time_ns) + ' vs ' + fmtTime(c.ref_time_ns) + ', ' + fmtPct(c.roofline_fraction) +
    ' of roofline' + (c.best_from_showdown ? ', showdown' : '') + ')' : 'none yet') +
    (oc ? ' — outcomes: ' + oc : '');
}

// Profile and diagnosis columns: filled when the API carries them (a
// string as it is, anything else as JSON text), else a dash.
function extra(v) {
  if (v === undefined || v === null || v === '') return '—';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

// Per device class progress of the selected campaign (from the list).
function renderClasses(id) {
  const tb = document.querySelector('#classes tbody');
  clear(tb);
  const c = listed.find(x => x.id === id);
  for (const k of (c && c.classes) || []) {
    tb.append(el('tr', {},
      el('td', {}, k.device_class),
      el('td', {class: 'num'}, k.evals_done),
      el('td', {class: 'num'}, k.evals_ok),
      el('td', {class: 'num'}, k.best_speedup ? k.best_speedup.toFixed(3) + 'x' : '—'),
      el('td', {class: 'num'}, fmtPct(k.best_roofline_fraction)),
      el('td', {class: 'num'}, fmtTime(k.best_time_ns))));
  }
}

// A PyTorch problem's speedup is over eager (its reference); the compile
// baselines timed in the same evaluation go in the cell's title.
function baselines(e) {
  const t = [];
  if (e.speedup_compile > 0) t.push(e.speedup_compile.toFixed(3) + 'x over torch.compile');
  if (e.speedup_max_autotune > 0) t.push(e.speedup_max_autotune.toFixed(3) + 'x over max-autotune');
  return t.length ? {title: t.join('; ')} : {};
}

function renderEvals(list) {
  const tb = document.querySelector('#evals tbody');
  clear(tb);
  for (const e of list.evaluations) {
    const knobs = Object.entries(e.knobs || {}).map(([k, v]) => k + '=' + v).join(' ');
    const ok = e.outcome === 'ok';
    tb.append(el('tr', {'data-candidate': e.candidate_id},
      el('td', {class: 'num'}, e.candidate_id),
      el('td', {}, e.device_class || ''),
      el('td', {}, e.template || ''),
      el('td', {}, knobs),
      el('td', {class: 'outcome ' + (ok ? 'outcome-ok' : 'outcome-bad')}, e.outcome),
      el('td', {class: 'stage'}, e.stage || ''),
      el('td', {class: 'reason'}, e.reason || ''),
      el('td', {class: 'num'}, fmtTime(e.time_ns_median)),
      el('td', Object.assign({class: 'num'}, baselines(e)),
         e.speedup ? e.speedup.toFixed(3) + 'x' : '—'),
      el('td', {class: 'num'}, fmtPct(e.roofline_fraction)),
      el('td', {}, e.proposer || ''),
      el('td', {class: 'profile'}, extra(e.profile)),
      el('td', {class: 'diagnosis'}, extra(e.diagnosis))));
  }
}

function renderSources(s) {
  document.getElementById('ref-caption').textContent = 'Reference (' + s.problem + ', ' + s.language + ')';
  document.getElementById('ref-source').textContent = s.reference;
  const b = s.best;
  document.getElementById('best-caption').textContent = b
    ? 'Best source: candidate ' + b.candidate_id + ' (' + (b.template || 'free-form') + ', ' +
      b.speedup.toFixed(3) + 'x on ' + b.device_class + ')'
    : 'Best source: none verified yet';
  document.getElementById('best-source').textContent = b ? b.source : '';
}

async function loadDetail(id) {
  const [c, series, evals, sources] = await Promise.all([
    api('campaigns/' + id), api('campaigns/' + id + '/series'),
    api('campaigns/' + id + '/evaluations'), api('campaigns/' + id + '/sources')]);
  if (id !== selected) return;
  renderDetail(c);
  renderClasses(id);
  drawBest(series);
  drawRoofline(series);
  renderEvals(evals);
  document.getElementById('evals-title').textContent = 'Evaluations' +
    (evals.evaluations.length < c.evals_done ? ' (the newest ' + evals.evaluations.length +
     ' of ' + c.evals_done + ')' : ' (' + c.evals_done + ')');
  renderSources(sources);
}

function select(id) {
  selected = id;
  history.replaceState(null, '', '#campaign=' + id);
  for (const tr of document.querySelectorAll('#campaigns tbody tr'))
    tr.classList.toggle('selected', Number(tr.dataset.id) === id);
  refresh();
}

async function refresh() {
  clearTimeout(timer);
  const line = document.getElementById('status-line');
  try {
    const got = await api('campaigns');
    if (selected === null && got.campaigns.length) {
      const m = /campaign=(\d+)/.exec(location.hash);
      selected = m ? Number(m[1]) : got.campaigns[0].id;
    }
    listed = renderCampaigns(got);
    if (selected !== null) await loadDetail(selected);
    line.textContent = 'updated ' + new Date().toLocaleTimeString();
    document.body.dataset.loaded = 'yes';
  } catch (e) {
    line.textContent = 'error: ' + e.message;
  }
  timer = setTimeout(refresh, REFRESH_MS);
}

document.addEventListener('DOMContentLoaded', refresh);
