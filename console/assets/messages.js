// Peeking at messages, and a dead-letter queue's dead letters.
import { enc, get, mayAll, post } from './api.js';
import { add, attrValue, bodyView, clear, errorBox, h, num, time } from './dom.js';
import { crumbs, href, q as qe, queueHref, tagHref } from './nav.js';

function attributesOf(m) {
  const list = Object.entries(m.attributes || {});
  if (!list.length) return null;
  return h('table', { class: 'attrs' }, h('tbody', {}, list.map(([k, v]) => h('tr', {}, h('th', { scope: 'row' }, k), h('td', {}, attrValue(v))))));
}

function messageCard(m) {
  return h('article', { class: 'msg', 'data-message': m.message_id },
    h('header', {}, h('code', {}, m.message_id), h('span', { class: 'muted' }, 'sent ', time(m.send_time)),
      m.topic ? h('span', { 'data-field': 'topic' }, 'topic ', h('code', {}, m.topic)) : null,
      m.priority ? h('span', { 'data-field': 'priority' }, `priority ${m.priority}`) : null,
      m.receive_count ? h('span', { class: 'muted' }, `received ${m.receive_count}×`) : null,
      m.move_count ? h('span', { class: 'muted' }, `moved back ${m.move_count}×`) : null),
    attributesOf(m), bodyView(m.body));
}

// tagSelect lists a queue's tags (the default first selected when none given).
async function tagSelect(queue, chosen) {
  const [q, tl] = await Promise.all([get(`/v1/queues/${enc(queue)}`), get(`/v1/queues/${enc(queue)}/tags?page_size=100`)]);
  const tags = (tl.tags || []).map((t) => t.name);
  const pick = chosen || q.queue.default_tag_name || tags[0] || '';
  return { queue: q.queue, select: h('select', { id: 'peek-tag', name: 'tag' }, tags.map((t) => h('option', { value: t, selected: t === pick }, t))) };
}

export async function peekPage(main, page) {
  const queue = page.params[0];
  const { select } = await tagSelect(queue, page.query.tag);
  const max = h('input', { id: 'peek-max', name: 'max', type: 'number', min: 1, max: 100, value: page.query.max || 10 });
  const ids = h('input', { id: 'peek-ids', name: 'ids', placeholder: 'message ids, comma-separated (optional)', 'data-search': true, value: page.query.ids || '' });
  const out = h('div', { id: 'peeked', 'aria-live': 'polite' });
  const form = h('form', { class: 'toolbar' },
    h('label', { for: 'peek-tag' }, 'Next available to tag', select),
    h('label', { for: 'peek-max' }, 'How many', max),
    h('label', { class: 'grow', for: 'peek-ids' }, 'Or by id', ids),
    h('button', { type: 'submit' }, 'Peek'));
  const run = async () => {
    const req = ids.value.trim()
      ? { message_ids: ids.value.split(',').map((s) => s.trim()).filter(Boolean) }
      : { tag: select.value, max_messages: Number(max.value || 10) };
    clear(out);
    try {
      const r = await post(`/v1/queues/${enc(queue)}/messages:peek`, req);
      const msgs = r.messages || [];
      if (!msgs.length) out.append(h('p', { class: 'empty' }, 'No messages.'));
      msgs.forEach((m) => out.append(messageCard(m)));
    } catch (e) { out.append(errorBox(e)); }
  };
  form.addEventListener('submit', (e) => { e.preventDefault(); run(); });
  add(main, [crumbs(queue), h('h1', {}, `Peek at ${queue}`),
    h('p', { class: 'muted' }, 'Peeking changes nothing: messages stay available, receive counts unchanged.'), form, out]);
  await run();
}

export async function deadPage(main, page) {
  const queue = page.params[0];
  const can = await mayAll(queue, ['peek', 'admin']);
  const { queue: q, select } = await tagSelect(queue, page.query.tag);
  const sources = q.source_queues || [];
  const source = h('select', { id: 'dead-source', name: 'source' }, h('option', { value: '' }, 'every source'),
    [...new Set([...sources, page.query.source || ''])].filter(Boolean).map((s) => h('option', { value: s, selected: s === page.query.source }, s)));
  const stag = h('input', { id: 'dead-tag', name: 'stag', placeholder: 'any', value: page.query.stag || '', 'data-search': true });
  const out = h('div', { id: 'dead' });
  const moveLink = h('a', { class: 'button', id: 'move-back' }, 'Move these back…');
  const form = h('form', { class: 'toolbar' },
    h('label', { for: 'dead-source' }, 'Source queue', source),
    h('label', { for: 'dead-tag' }, 'Source tag', stag),
    h('label', { for: 'peek-tag' }, 'Read through tag', select),
    h('button', { type: 'submit' }, 'Show'), can.admin ? moveLink : null);
  const run = async () => {
    moveLink.href = href(`/queue/${qe(queue)}/moves`, { source: source.value, stag: stag.value.trim() });
    clear(out);
    // Up to 10 pages of 100: the filters below need what they filter.
    let msgs = [];
    let token = '';
    try {
      for (let i = 0; i < 10; i++) {
        const r = await post(`/v1/queues/${enc(queue)}/messages:peek`, { tag: select.value, max_messages: 100, page_token: token });
        msgs.push(...(r.messages || []));
        token = r.next_page_token || '';
        if (!token) break;
      }
    } catch (e) { out.append(errorBox(e)); return; }
    const total = msgs.length;
    msgs = msgs.filter((m) => {
      const d = m.dead_letter || {};
      return (!source.value || d.source_queue_name === source.value) && (!stag.value.trim() || d.source_tag === stag.value.trim());
    });
    const rows = msgs.map((m) => {
      const d = m.dead_letter || {};
      return h('tr', { 'data-message': m.message_id },
        h('td', {}, d.source_queue_name ? h('a', { href: queueHref(d.source_queue_name) }, d.source_queue_name) : '—', ' / ',
          d.source_tag && d.source_queue_name ? h('a', { href: tagHref(d.source_queue_name, d.source_tag) }, d.source_tag) : (d.source_tag || '—')),
        h('td', { 'data-col': 'reason' }, h('code', {}, d.reason || '—')),
        h('td', { 'data-col': 'description' }, d.description || ''),
        h('td', { class: 'nowrap' }, time(d.dead_timestamp)),
        h('td', { class: 'num' }, num(d.original_receive_count)),
        h('td', {}, h('details', {}, h('summary', {}, h('code', {}, m.message_id)), attributesOf(m), bodyView(m.body))));
    });
    add(out, [
      h('p', { class: 'muted' }, `${msgs.length} shown of the next ${total} dead letters available to tag ${select.value}${token ? ' (the first 1,000 are read)' : ''}.`),
      h('div', { class: 'table-wrap' }, h('table', { id: 'dead-table' },
        h('thead', {}, h('tr', {}, ['Source queue / tag', 'Reason', 'Description', 'Dead at', 'Receives', 'Message'].map((c, i) => h('th', { scope: 'col', class: i === 4 ? 'num' : '' }, c)))),
        h('tbody', {}, rows.length ? rows : h('tr', {}, h('td', { colspan: 6, class: 'empty' }, 'No dead letters.'))))),
    ]);
  };
  form.addEventListener('submit', (e) => { e.preventDefault(); run(); });
  add(main, [crumbs(queue), h('h1', {}, `Dead letters in ${queue}`), form, out]);
  if (!q.dead_letter_queue) main.insertBefore(h('p', { class: 'note' }, `${queue} is not a dead-letter queue.`), form);
  // Refreshed every 5 s, unless a message is open for reading.
  await page.every(5000, () => (out.querySelector('details[open]') ? null : run()));
}
