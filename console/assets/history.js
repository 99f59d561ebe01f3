// Rates over time as tagqd keeps them (GetQueueRates: a point every 10 s
// over the last hour, the same on every replica and after a restart),
// unlike the live rates, which exist only while a page is open: in,
// deleted and dead-lettered per second, as an inline SVG chart with its
// figures in text beside it.
import { enc, get } from './api.js';
import { clear, errorBox, h, rate, s } from './dom.js';

// The series drawn: the API's field, its name, its colour class (the
// live chart's: in s1, deleted s3, dead s4).
const SERIES = [
  ['in_per_second', 'in', 's1'],
  ['deleted_per_second', 'deleted', 's3'],
  ['dead_per_second', 'dead-lettered', 's4'],
];

// historySection is the heading and box of the queue's (or the tag's)
// rates over the last hour, read now and then every 10 s at least while
// page is shown. A failure shows in the box; the rest of the page stays.
export function historySection(page, queue, tag = '') {
  const box = h('div', { id: tag ? 'tag-history' : 'queue-history', class: 'history' });
  page.every(10000, async () => {
    try {
      await history(box, queue, tag);
    } catch (e) {
      if (page.live) clear(box).append(errorBox(e));
    }
  });
  return [h('h2', {}, 'Rates over the last hour'), box];
}

// history fills box with the queue's chart, or the tag's when tag is set.
export async function history(box, queue, tag = '') {
  const r = await get(`/v1/queues/${enc(queue)}/rates${tag ? `?tag=${enc(tag)}` : ''}`);
  const points = tag ? (((r.tags || [])[0] || {}).points || []) : (r.points || []);
  const what = tag ? `tag ${tag}` : `queue ${queue}`;
  clear(box).append(historyChart(points, { what, resolution: r.resolution_seconds || 10 }));
}

const clock = (ts) => new Date(ts).toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit' });

// historyChart draws points (oldest first) and says in text, for every
// series, its peak (and when) and its latest value.
export function historyChart(points, { what, resolution }) {
  const W = 600; const H = 160;
  const values = SERIES.map(([f]) => points.map((p) => Number(p[f] || 0)));
  const max = Math.max(0, ...values.flat());
  const top = max > 0 ? max : 1;
  const minutes = Math.round((points.length * resolution) / 60);
  const summary = SERIES.map(([, name], i) => {
    const vs = values[i];
    if (!vs.length) return `${name}: no data`;
    const peak = Math.max(...vs);
    const at = vs.indexOf(peak);
    return peak > 0
      ? `${name}: peak ${rate(peak)}/s at ${clock(points[at].time)}, latest ${rate(vs[vs.length - 1])}/s`
      : `${name}: 0/s`;
  });
  const label = `Rates of ${what} per second over the last ${minutes} minutes, a point every ${resolution} s. ${summary.join('; ')}.`;
  const svg = s('svg', { class: 'chart history', viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'none', role: 'img', 'aria-label': label });
  svg.append(s('title', {}, label));
  for (const y of [0, H / 2, H]) svg.append(s('line', { class: 'axis', x1: 0, y1: y, x2: W, y2: y }));
  values.forEach((vs, i) => {
    if (vs.length < 2) return;
    const step = W / (vs.length - 1);
    const pts = vs.map((v, j) => `${(j * step).toFixed(1)},${(H - (v / top) * (H - 4)).toFixed(1)}`).join(' ');
    svg.append(s('polyline', { class: SERIES[i][2], points: pts, 'vector-effect': 'non-scaling-stroke', 'data-series': SERIES[i][1] }));
  });
  const span = points.length ? `${clock(points[0].time)}–${clock(points[points.length - 1].time)}` : '';
  return h('figure', { class: 'chart history', 'data-max': String(max) },
    h('div', { class: 'legend' }, SERIES.map(([, name, cls], i) => h('span', { class: cls }, summary[i]))),
    h('div', { class: 'muted axis-y' }, `${rate(top)}/s`),
    svg,
    h('figcaption', { class: 'muted' }, `the last ${minutes} minutes (${span}), a point every ${resolution} s, kept by tagqd`));
}
