// DOM helpers. Text from the API only ever goes in as text nodes or
// attribute values, never as HTML.

export function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  add(el, kids);
  return el;
}

const SVG = 'http://www.w3.org/2000/svg';
export function s(tag, attrs, ...kids) {
  const el = document.createElementNS(SVG, tag);
  setAttrs(el, attrs);
  add(el, kids);
  return el;
}

function setAttrs(el, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.setAttribute('class', v);
    else if (k === 'value' && 'value' in el) el.value = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
}

export function add(el, kids) {
  for (const k of [kids].flat(Infinity)) {
    if (k === null || k === undefined || k === false) continue;
    el.append(k instanceof Node ? k : String(k));
  }
  return el;
}

export function clear(el) { while (el.firstChild) el.removeChild(el.firstChild); return el; }

// --- formatting ---

export const num = (n) => (n === undefined || n === null || n === '' ? '—' : Number(n).toLocaleString('en-US'));

export function age(seconds) {
  const n = Number(seconds || 0);
  if (n <= 0) return '—';
  if (n < 60) return `${n}s`;
  if (n < 3600) return `${Math.floor(n / 60)}m ${n % 60}s`;
  if (n < 86400) return `${Math.floor(n / 3600)}h ${Math.floor((n % 3600) / 60)}m`;
  return `${Math.floor(n / 86400)}d ${Math.floor((n % 86400) / 3600)}h`;
}

export function time(ts) {
  if (!ts) return '—';
  const d = new Date(ts);
  if (Number.isNaN(d.getTime())) return String(ts);
  return h('time', { datetime: d.toISOString(), title: d.toISOString() }, d.toLocaleString());
}

export const rate = (r) => (r === null || r === undefined ? '—' : r < 10 ? r.toFixed(2) : r.toFixed(0));

// --- toasts and errors ---

export function toast(text, bad = false) {
  const box = document.getElementById('toast');
  const t = h('div', { class: bad ? 'bad' : '' }, text);
  box.append(t);
  setTimeout(() => t.remove(), bad ? 8000 : 4000);
}

// errorBox shows an API error: its message and ErrorInfo reason.
export function errorBox(err) {
  const box = h('div', { class: 'error', role: 'alert' });
  if (err && err.reason) add(box, [h('strong', {}, err.reason), ': ']);
  add(box, (err && err.message) || String(err));
  if (err && err.reason === 'PERMISSION_DENIED' && err.metadata.permission) {
    add(box, h('div', { class: 'muted' }, `This needs ${err.metadata.permission}${err.metadata.queue ? ` on ${err.metadata.queue}` : ''}.`));
  }
  return box;
}

// confirm asks before a destructive action; with expect, the user must
// type it (a queue's name) first. Resolves true to go ahead.
export function confirm({ title, text, action = 'Confirm', expect = '' }) {
  const dlg = document.getElementById('confirm');
  const form = document.getElementById('confirm-form');
  const typed = document.getElementById('confirm-type');
  const ok = document.getElementById('confirm-ok');
  document.getElementById('confirm-title').textContent = title;
  document.getElementById('confirm-text').textContent = text;
  document.getElementById('confirm-expect').textContent = expect;
  document.getElementById('confirm-type-label').hidden = !expect;
  typed.value = '';
  ok.textContent = action;
  ok.disabled = !!expect;
  return new Promise((resolve) => {
    const done = (v) => {
      typed.oninput = null; form.onsubmit = null; dlg.oncancel = null;
      document.getElementById('confirm-cancel').onclick = null;
      dlg.close();
      resolve(v);
    };
    typed.oninput = () => { ok.disabled = typed.value !== expect; };
    form.onsubmit = (e) => { e.preventDefault(); if (!ok.disabled) done(true); };
    document.getElementById('confirm-cancel').onclick = () => done(false);
    dlg.oncancel = (e) => { e.preventDefault(); done(false); };
    dlg.showModal();
    (expect ? typed : document.getElementById('confirm-cancel')).focus();
  });
}

// --- rates from successive counter readings ---

// Rates keeps, per key, the last `keep` readings of some counters and
// turns them into per-second rates between readings.
export class Rates {
  constructor(keep = 60, maxKeys = 5000) { this.keep = keep; this.maxKeys = maxKeys; this.samples = new Map(); }

  add(key, counters, t = Date.now()) {
    let list = this.samples.get(key);
    if (!list) {
      if (this.samples.size >= this.maxKeys) this.samples.delete(this.samples.keys().next().value);
      list = [];
      this.samples.set(key, list);
    }
    const last = list[list.length - 1];
    if (last && t - last.t < 500) return; // two renders of one reading
    list.push({ t, c: counters });
    if (list.length > this.keep) list.shift();
  }

  // series: per reading after the first, the rate of counter name (≥ 0:
  // a counter that went down, as after a purge, counts as 0).
  series(key, name) {
    const list = this.samples.get(key) || [];
    const out = [];
    for (let i = 1; i < list.length; i++) {
      const dt = (list[i].t - list[i - 1].t) / 1000;
      out.push(Math.max(0, (list[i].c[name] - list[i - 1].c[name]) / dt));
    }
    return out;
  }

  last(key, name) { const s = this.series(key, name); return s.length ? s[s.length - 1] : null; }
}

// tagCounters: the counters of a tag's state the console draws rates of.
// "in" is what entered the tag: every message a tag admits is available,
// delayed, in flight, deleted, dead or expired, so the sum only grows by
// arrivals (sends the tag admits, and dead letters moved back), and by
// what a seek back makes available again (a seek forward takes it down:
// counted as 0, as a purge is).
export function tagCounters(st = {}) {
  const n = (k) => Number(st[k] || 0);
  return {
    in: n('available') + n('delayed') + n('in_flight') + n('deleted_total') + n('dead_total') + n('expired_total'),
    received: n('received_total'), deleted: n('deleted_total'), dead: n('dead_total'),
  };
}

// sparkline draws series (arrays of numbers, one per class s1, s2…) in a
// small SVG, scaled to their common maximum.
export function sparkline(series, { width = 120, height = 26, label = '' } = {}) {
  const max = Math.max(1e-9, ...series.flat());
  const el = s('svg', { class: 'spark', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': label });
  add(el, s('title', {}, label));
  series.forEach((pts, i) => {
    if (pts.length < 2) return;
    const step = width / (pts.length - 1);
    const p = pts.map((v, j) => `${(j * step).toFixed(1)},${(height - 2 - (v / max) * (height - 4)).toFixed(1)}`).join(' ');
    el.append(s('polyline', { class: `s${i + 1}`, points: p }));
  });
  return el;
}

// chart is a larger line chart of named series over the readings. The
// SVG stretches to its box, so its labels (the y axis's maximum, the time
// span) are HTML beside it.
export function chart(named, { label = '', seconds = 0 } = {}) {
  const W = 600; const H = 200;
  const all = named.flatMap(([, pts]) => pts);
  const max = Math.max(1, ...all);
  const el = s('svg', { class: 'chart', viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'none', role: 'img', 'aria-label': label });
  add(el, s('title', {}, label));
  for (const y of [0, H / 2, H]) el.append(s('line', { class: 'axis', x1: 0, y1: y, x2: W, y2: y }));
  named.forEach(([, pts], i) => {
    if (pts.length < 2) return;
    const step = W / (pts.length - 1);
    const p = pts.map((v, j) => `${(j * step).toFixed(1)},${(H - (v / max) * (H - 4)).toFixed(1)}`).join(' ');
    el.append(s('polyline', { class: `s${i + 1}`, points: p, 'vector-effect': 'non-scaling-stroke' }));
  });
  return h('figure', { class: 'chart' },
    h('div', { class: 'muted axis-y' }, `${rate(max)}/s`), el,
    h('figcaption', { class: 'muted' }, seconds ? `the last ${Math.round(seconds)} s, a reading every few seconds` : 'waiting for readings…'));
}

export function legend(names) {
  return h('div', { class: 'legend' }, names.map((n, i) => h('span', { class: `s${i + 1}` }, n)));
}

// --- message bodies ---

export function decodeBase64(b64) {
  const bin = atob(b64 || '');
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

const PREVIEW = 4096;

// bodyView shows a body as text, JSON or hex (a toggle; JSON first when
// it parses), the first PREVIEW bytes.
export function bodyView(b64) {
  const bytes = decodeBase64(b64);
  const shown = bytes.subarray(0, PREVIEW);
  const text = new TextDecoder('utf-8', { fatal: false }).decode(shown);
  let json = null;
  if (bytes.length <= PREVIEW) {
    try { json = JSON.stringify(JSON.parse(text), null, 2); } catch { json = null; }
  }
  const printable = !/[\u0000-\u0008\u000e-\u001f\ufffd]/.test(text);
  const views = { text: () => text, json: () => json ?? 'not JSON', hex: () => hexdump(shown) };
  const pre = h('pre', { class: 'mono' });
  const buttons = {};
  const pick = (v) => {
    pre.textContent = views[v]();
    for (const [k, b] of Object.entries(buttons)) b.setAttribute('aria-pressed', String(k === v));
  };
  const seg = h('div', { class: 'seg', role: 'group', 'aria-label': 'Body as' },
    ['text', 'json', 'hex'].map((v) => (buttons[v] = h('button', { type: 'button', 'aria-pressed': 'false', disabled: v === 'json' && json === null, onclick: () => pick(v) }, v.toUpperCase()))));
  pick(json !== null ? 'json' : printable ? 'text' : 'hex');
  return h('div', { class: 'body' },
    h('div', { class: 'actions' }, seg, h('span', { class: 'muted' }, bytes.length > PREVIEW ? `first ${PREVIEW} of ${num(bytes.length)} bytes` : `${num(bytes.length)} bytes`)),
    pre);
}

export function hexdump(bytes) {
  const lines = [];
  for (let off = 0; off < bytes.length; off += 16) {
    const row = bytes.subarray(off, off + 16);
    const hex = Array.from(row, (b) => b.toString(16).padStart(2, '0')).join(' ');
    const asc = Array.from(row, (b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.')).join('');
    lines.push(`${off.toString(16).padStart(8, '0')}  ${hex.padEnd(47)}  ${asc}`);
  }
  return lines.join('\n');
}

// attrValue shows a message attribute's value.
export function attrValue(a = {}) {
  if ('string_value' in a && a.string_value !== null) return a.string_value;
  for (const [k, v] of Object.entries(a)) if (v !== null && v !== '' && v !== undefined) return `${k}: ${typeof v === 'object' ? JSON.stringify(v) : v}`;
  return '';
}
