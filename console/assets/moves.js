// Moves of dead letters back to their source queues: start (rate and
// filters), live progress, cancel.
import { enc, get, mayAll, post } from './api.js';
import { add, clear, confirm, errorBox, h, num, time, toast } from './dom.js';
import { crumbs } from './nav.js';

export async function movesPage(main, page) {
  const queue = page.params[0];
  const can = await mayAll(queue, ['info', 'admin']);
  const q = (await get(`/v1/queues/${enc(queue)}`)).queue;
  add(main, [
    crumbs(queue),
    h('h1', {}, `Moves from ${queue}`),
  ]);
  const list = h('div', { id: 'moves' });
  if (can.admin) main.append(startForm(queue, q, page.query, () => refresh()));
  add(main, [h('h2', {}, 'Tasks'), list]);
  const refresh = async () => {
    const r = await get(`/v1/queues/${enc(queue)}/messageMoves`);
    if (!page.live) return;
    draw(list, queue, r.tasks || [], can.admin, refresh);
  };
  await page.every(2000, refresh);
}

function startForm(queue, q, query, started) {
  const errors = h('div', { class: 'errors' });
  const sources = q.source_queues || [];
  const source = h('select', { id: 'm-source', name: 'source' }, h('option', { value: '' }, 'every source queue'),
    [...new Set([...sources, query.source || ''])].filter(Boolean).map((s) => h('option', { value: s, selected: s === query.source }, s)));
  const form = h('form', { class: 'grid panel', id: 'start-move' },
    h('label', { for: 'm-source' }, 'Source queue', source),
    h('label', { for: 'm-tag' }, 'Source tag', h('input', { id: 'm-tag', name: 'stag', placeholder: 'every tag', value: query.stag || '', autocomplete: 'off' })),
    h('label', { for: 'm-rate' }, 'Messages per second (1–10000)', h('input', { id: 'm-rate', name: 'rate', type: 'number', min: 1, max: 10000, value: 500 })),
    h('div', { class: 'buttons' }, h('button', { type: 'submit', id: 'start-move-button' }, 'Start move')), errors);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clear(errors);
    const el = form.elements;
    const what = `${el.source.value ? `dead letters of ${el.source.value}` : 'every dead letter'}${el.stag.value.trim() ? `, tag ${el.stag.value.trim()},` : ''}`;
    if (!await confirm({ title: 'Start moving?', text: `Move ${what} from ${queue} back to the tag that failed it, at most ${el.rate.value}/s.`, action: 'Start move' })) return;
    try {
      const r = await post(`/v1/queues/${enc(queue)}:startMessageMove`, {
        source_queue: el.source.value, source_tag: el.stag.value.trim(), max_messages_per_second: Number(el.rate.value || 0),
      });
      toast(`Move ${r.task.task_id} started`);
      started();
    } catch (err) { errors.append(errorBox(err)); }
  });
  return form;
}

function draw(box, queue, tasks, admin, refresh) {
  clear(box);
  const rows = tasks.map((t) => {
    const moved = Number(t.moved_messages || 0); const failed = Number(t.failed_messages || 0); const left = Number(t.remaining_messages || 0);
    const total = moved + failed + left;
    const running = t.state === 'STATE_RUNNING';
    return h('tr', { 'data-task': t.task_id },
      h('td', {}, h('code', {}, t.task_id)),
      h('td', {}, t.source_queue || 'all', ' / ', t.source_tag || 'all'),
      h('td', {}, h('span', { class: `badge state-${t.state}` }, String(t.state || '').replace(/^STATE_/, '').toLowerCase())),
      h('td', {}, h('progress', { max: total || 1, value: total ? moved + failed : (running ? 0 : 1), 'aria-label': `${moved} of ${total} moved` })),
      h('td', { class: 'num', 'data-col': 'moved' }, num(moved)),
      h('td', { class: 'num hide-narrow' }, num(failed)),
      h('td', { class: 'num', 'data-col': 'remaining' }, num(left)),
      h('td', { class: 'num hide-narrow' }, `${num(t.max_messages_per_second)}/s`),
      h('td', { class: 'hide-narrow' }, time(t.update_time), t.failure_reason ? h('div', { class: 'muted' }, t.failure_reason) : null),
      h('td', {}, admin && running ? h('button', {
        type: 'button', class: 'ghost small', 'aria-label': `Cancel move ${t.task_id}`,
        onclick: async () => {
          if (!await confirm({ title: 'Cancel this move?', text: 'Dead letters not moved yet stay in the dead-letter queue.', action: 'Cancel move' })) return;
          try { await post(`/v1/queues/${enc(queue)}/messageMoves/${enc(t.task_id)}:cancel`, {}); toast('Move cancelled'); refresh(); } catch (e) { box.prepend(errorBox(e)); }
        },
      }, 'Cancel') : null));
  });
  box.append(h('div', { class: 'table-wrap' }, h('table', { id: 'moves-table' },
    h('thead', {}, h('tr', {}, ['Task', 'Source queue / tag', 'State', 'Progress', 'Moved', 'Failed', 'Remaining', 'Rate', 'Updated', h('span', { class: 'sr-only' }, 'Actions')]
      .map((c, i) => h('th', { scope: 'col', class: [4, 6].includes(i) ? 'num' : [5, 7].includes(i) ? 'num hide-narrow' : i === 8 ? 'hide-narrow' : '' }, c)))),
    h('tbody', {}, rows.length ? rows : h('tr', {}, h('td', { colspan: 10, class: 'empty' }, 'No moves.'))))));
}
