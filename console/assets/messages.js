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

// The peek page: look without receiving, page after page (100 a page at
// most, then the next page's token); and, as the SQS console's "poll for
// messages", receive some for a tag and settle each one by itself: delete,
// give back now, dead-letter with a reason, or send a copy to another
// queue and delete this one.
export async function peekPage(main, page) {
  const queue = page.params[0];
  const [{ queue: q, select }, can] = await Promise.all([tagSelect(queue, page.query.tag), mayAll(queue, ['peek', 'receive', 'handle'])]);
  const max = h('input', { id: 'peek-max', name: 'max', type: 'number', min: 1, max: 100, value: page.query.max || 10 });
  const ids = h('input', { id: 'peek-ids', name: 'ids', placeholder: 'message ids, comma-separated (optional)', 'data-search': true, value: page.query.ids || '' });
  const out = h('div', { id: 'peeked', 'aria-live': 'polite' });
  const pager = h('div', { class: 'toolbar', id: 'peek-pager' });
  const form = h('form', { class: 'toolbar', id: 'peek-form' },
    h('label', { for: 'peek-tag' }, 'Next available to tag', select),
    h('label', { for: 'peek-max' }, 'How many (a page)', max),
    h('label', { class: 'grow', for: 'peek-ids' }, 'Or by id', ids),
    h('button', { type: 'submit' }, 'Peek'));
  // Pages: the tokens of the pages shown so far, to go back.
  let tokens = [''];
  const run = async (token = '') => {
    const req = ids.value.trim()
      ? { message_ids: ids.value.split(',').map((x) => x.trim()).filter(Boolean) }
      : { tag: select.value, max_messages: Number(max.value || 10), page_token: token };
    clear(out);
    clear(pager);
    try {
      const r = await post(`/v1/queues/${enc(queue)}/messages:peek`, req);
      const msgs = r.messages || [];
      if (!msgs.length) out.append(h('p', { class: 'empty' }, 'No messages.'));
      msgs.forEach((m) => out.append(messageCard(m)));
      if (req.message_ids) return;
      const pageNo = tokens.indexOf(token) + 1;
      const prev = h('button', { type: 'button', class: 'ghost', id: 'peek-prev', disabled: pageNo <= 1, onclick: () => run(tokens[pageNo - 2]) }, '← Previous page');
      const next = h('button', { type: 'button', class: 'ghost', id: 'peek-next', disabled: !r.next_page_token, onclick: () => {
        tokens = tokens.slice(0, pageNo);
        tokens.push(r.next_page_token);
        run(r.next_page_token);
      } }, 'Next page →');
      add(pager, [prev, h('span', { class: 'muted', id: 'peek-page' }, `page ${pageNo}`), next]);
    } catch (e) { out.append(errorBox(e)); }
  };
  form.addEventListener('submit', (e) => { e.preventDefault(); tokens = ['']; run(''); });
  add(main, [crumbs(queue), h('h1', {}, `Peek at ${queue}`),
    h('p', { class: 'muted' }, 'Peeking changes nothing: messages stay available, receive counts unchanged.'), form, out, pager]);
  if (can.receive) main.append(receivePanel(queue, q, select, can.handle));
  await run('');
}

// receivePanel receives messages for the chosen tag and offers, for each,
// the calls its receipt handle allows.
function receivePanel(queue, q, select, mayHandle) {
  const count = h('input', { id: 'recv-max', type: 'number', min: 1, max: 10, value: 1 });
  const vis = h('input', { id: 'recv-vis', type: 'number', min: 0, max: 43200, value: 60 });
  const out = h('div', { id: 'received', 'aria-live': 'polite' });
  const form = h('form', { class: 'toolbar', id: 'receive-form' },
    h('label', { for: 'recv-max' }, 'How many', count),
    h('label', { for: 'recv-vis' }, 'Hidden from the tag for (s)', vis),
    h('button', { type: 'submit', id: 'receive-button' }, 'Receive'));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clear(out);
    try {
      const r = await post(`/v1/queues/${enc(queue)}/messages:receive`, { tag: select.value, max_messages: Number(count.value || 1), visibility_seconds: Number(vis.value || 0) });
      const msgs = r.messages || [];
      if (!msgs.length) out.append(h('p', { class: 'empty' }, `Nothing available to ${select.value}.`));
      msgs.forEach((m) => out.append(receivedCard(queue, q, m, mayHandle)));
    } catch (err) { out.append(errorBox(err)); }
  });
  return h('section', { class: 'panel', id: 'receive' },
    h('h2', {}, 'Receive and settle one at a time'),
    h('p', { class: 'muted' }, 'Receiving counts as a delivery to the tag (its receive count goes up, and a redrive policy counts it). Each message stays hidden from the tag until you settle it or its time passes.'),
    form, out);
}

// receivedCard is a received message with its actions.
function receivedCard(queue, q, m, mayHandle) {
  const card = messageCard(m);
  card.classList.add('received');
  const status = h('div', { class: 'status', 'aria-live': 'polite' });
  const buttons = [];
  const settle = async (what, fn) => {
    clear(status);
    buttons.forEach((b) => { b.disabled = true; });
    try {
      await fn();
      status.append(h('p', { class: 'note', 'data-done': what }, what));
    } catch (err) {
      status.append(errorBox(err));
      buttons.forEach((b) => { b.disabled = false; });
    }
  };
  const handle = m.receipt_handle;
  const act = (id, text, cls, fn) => {
    const b = h('button', { type: 'button', class: cls, 'data-action': id, onclick: fn }, text);
    buttons.push(b);
    return b;
  };
  const reason = h('input', { id: `dead-reason-${m.message_id}`, placeholder: 'CONSUMER_DEAD_LETTERED', 'aria-label': 'Dead-letter reason', class: 'narrow-text' });
  const target = h('input', { id: `move-to-${m.message_id}`, placeholder: 'queue name', 'aria-label': 'Queue to send a copy to', class: 'narrow-text', pattern: '[A-Za-z0-9_\\-]{1,80}' });
  const actions = h('div', { class: 'actions msg-actions' },
    act('delete', 'Delete', 'ghost small', () => settle('Deleted.', () => post(`/v1/queues/${enc(queue)}/messages:delete`, { receipt_handle: handle }))),
    act('return', 'Give back now', 'ghost small', () => settle('Given back: available to the tag again.',
      () => post(`/v1/queues/${enc(queue)}/messages:changeVisibility`, { receipt_handle: handle, visibility_seconds: 0 }))),
    q.redrive_policy && q.redrive_policy.dead_letter_queue ? [reason,
      act('dead', 'Dead-letter', 'ghost small', () => settle(`Dead-lettered to ${q.redrive_policy.dead_letter_queue}.`,
        () => post(`/v1/queues/${enc(queue)}/messages:dead`, { receipt_handle: handle, reason: reason.value.trim(), description: 'from the tagq console' })))] : null,
    target,
    act('move', 'Send a copy there and delete', 'ghost small', () => settle(`Sent to ${target.value.trim()} and deleted here.`, async () => {
      const to = target.value.trim();
      if (!to) throw new Error('Name the queue to send the copy to.');
      const msg = { body: m.body };
      const attrs = Object.fromEntries(Object.entries(m.attributes || {}).filter(([k]) => !k.startsWith('DLQ.')));
      if (Object.keys(attrs).length) msg.attributes = attrs;
      if (m.topic) msg.topic = m.topic;
      if (m.priority) msg.priority = m.priority;
      await post(`/v1/queues/${enc(to)}/messages`, msg);
      await post(`/v1/queues/${enc(queue)}/messages:delete`, { receipt_handle: handle });
    })));
  if (!mayHandle) {
    card.append(h('p', { class: 'note' }, 'Settling a message (delete, give back, dead-letter) needs HANDLE on this queue: it comes back when its time passes.'));
    return card;
  }
  add(card, [actions, m.dead_letter ? h('p', { class: 'muted' }, 'A copy sent to a queue reaches every tag of it; to give a dead letter back to the tag it died in only, use Moves.') : null, status]);
  return card;
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
