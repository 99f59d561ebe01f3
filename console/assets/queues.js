// The queues page (search, paging, per-tag counters, rates) and the new
// queue form.
import { auth, call, enc, get, may } from './api.js';
import { add, age, clear, errorBox, h, num, Rates, sparkline, tagCounters, toast } from './dom.js';
import { crumbs, go, href, queueHref, tagHref } from './nav.js';
import { createParams, label, queueFields } from './schema.js';

// Readings of counters across visits of the page (bounded per key and in keys).
export const rates = new Rates(60, 5000);

const TAGS_SHOWN = 6;

// Earlier pages' tokens, to page back: the API's tokens only go forward.
let back = { prefix: null, tokens: [] };

export async function queuesPage(main, page) {
  const prefix = page.query.prefix || '';
  const token = page.query.token || '';
  const size = Number(page.query.size || 50);
  if (back.prefix !== prefix || !token) back = { prefix, tokens: [] };

  const search = h('input', { type: 'search', value: prefix, 'data-search': true, id: 'queue-search', placeholder: 'Name prefix', 'aria-label': 'Queue name prefix (press / to focus)' });
  let timer = 0;
  search.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => go('/queues', { prefix: search.value.trim(), size: page.query.size }), 350);
  });
  const sizeSel = h('select', { id: 'page-size', 'aria-label': 'Queues per page', onchange: (e) => go('/queues', { prefix, size: e.target.value }) },
    [25, 50, 100, 200].map((n) => h('option', { value: n, selected: n === size }, `${n} per page`)));
  add(main, [
    h('h1', {}, 'Queues'),
    h('div', { class: 'toolbar' },
      h('label', { class: 'grow', for: 'queue-search' }, 'Search', search),
      h('label', { for: 'page-size' }, 'Page', sizeSel),
      auth.create ? h('a', { class: 'button', href: '#/new-queue' }, 'New queue') : null),
  ]);
  const body = h('div', { id: 'queues' });
  const pager = h('div', { class: 'toolbar' });
  add(main, [body, pager]);

  let first;
  try {
    first = await get(`/v1/queues?page_size=${size}&prefix=${enc(prefix)}&page_token=${enc(token)}`);
  } catch (e) {
    if (e.reason === 'PERMISSION_DENIED' && auth.mode === 'user') return myQueues(body, e);
    throw e;
  }
  const table = h('table', { id: 'queue-table' });
  if (auth.mode === 'user') add(body, h('p', { class: 'note' }, 'The queues you hold a permission on.'));
  add(body, h('div', { class: 'table-wrap' }, table));

  const refresh = async (listing) => {
    const list = listing || await get(`/v1/queues?page_size=${size}&prefix=${enc(prefix)}&page_token=${enc(token)}`);
    const queues = list.queues || [];
    const tagLists = await pool(queues, 6, (q) => get(`/v1/queues/${enc(q.name)}/tags?page_size=100`).then((r) => r.tags || [], () => null));
    if (!page.live) return;
    drawTable(table, queues, tagLists);
    drawPager(pager, list, prefix, token, size, queues.length);
  };
  // A tag listing per queue shown: larger pages refresh less often.
  await page.every(size > 50 ? 10000 : 5000, () => refresh(first).finally(() => { first = null; }));
}

// The queue row's numbers: Messages is what the queue holds (once, however
// many tags read it); Available, In flight and Oldest are the largest of its
// tags' (the tag furthest behind), not a sum, which would count a message
// once per tag; Dead-lettered adds up what its tags dead-lettered since
// they were created (moving dead letters back does not lower it: a
// dead-letter queue's own Messages is what waits there).
export const QUEUE_ROW_NOTE = 'Queue rows: Messages is what the queue holds; Available, In flight and Oldest are those of its tag furthest behind; Dead-lettered counts what its tags dead-lettered since they were created (a dead-letter queue\'s Messages is what waits there).';

export function queueNumbers(tags) {
  const st = (t) => t.state || {};
  const max = (k) => (tags.length ? Math.max(...tags.map((t) => Number(st(t)[k] || 0))) : null);
  const sum = (k) => tags.reduce((a, t) => a + Number(st(t)[k] || 0), 0);
  return { available: max('available'), in_flight: max('in_flight'), oldest: max('oldest_available_age_seconds') || 0, dead: sum('dead_total') };
}

function drawTable(table, queues, tagLists) {
  clear(table);
  add(table, h('caption', { class: 'muted' }, QUEUE_ROW_NOTE));
  add(table, h('thead', {}, h('tr', {},
    h('th', { scope: 'col' }, 'Queue / tag'), h('th', { class: 'num hide-narrow', scope: 'col' }, 'Messages'),
    h('th', { class: 'num', scope: 'col' }, 'Available'), h('th', { class: 'num', scope: 'col' }, 'In flight'),
    h('th', { class: 'num hide-narrow', scope: 'col' }, 'Oldest'), h('th', { class: 'num', scope: 'col' }, 'Dead-lettered'),
    h('th', { scope: 'col', class: 'hide-narrow' }, 'In / deleted per s'))));
  const tb = h('tbody');
  if (!queues.length) tb.append(h('tr', {}, h('td', { colspan: 7, class: 'empty' }, 'No queues.')));
  queues.forEach((q, i) => {
    const tags = tagLists[i] || [];
    const n = queueNumbers(tags);
    const known = !!tagLists[i];
    const sum = (k) => tags.reduce((a, t) => a + Number((t.state || {})[k] || 0), 0);
    const key = `q:${q.name}`;
    // In: a message sent enters each tag that admits it once; the largest is the queue's.
    rates.add(key, { in: Math.max(0, ...tags.map((t) => tagCounters(t.state).in)), deleted: sum('deleted_total') });
    const st = q.state || {};
    tb.append(h('tr', { 'data-queue': q.name },
      h('th', { scope: 'row' }, h('a', { href: queueHref(q.name) }, q.name), ' ', q.dead_letter_queue ? h('span', { class: 'badge dlq' }, 'DLQ') : null,
        h('span', { class: 'muted' }, ` ${num(st.tag_count)} tag${Number(st.tag_count) === 1 ? '' : 's'}`)),
      h('td', { class: 'num hide-narrow', 'data-col': 'messages' }, num(st.retained_messages)),
      h('td', { class: 'num', 'data-col': 'available' }, known ? num(n.available) : '?'),
      h('td', { class: 'num', 'data-col': 'in_flight' }, known ? num(n.in_flight) : '?'),
      h('td', { class: 'num hide-narrow' }, age(n.oldest)),
      h('td', { class: 'num', 'data-col': 'dead' }, known ? num(n.dead) : '?'),
      h('td', { class: 'hide-narrow' }, sparkline([rates.series(key, 'in'), rates.series(key, 'deleted')], { label: `${q.name}: messages in (the tag admitting most) and deletes (all tags) per second` }))));
    for (const t of tags.slice(0, TAGS_SHOWN)) {
      const tk = `t:${q.name}/${t.name}`;
      const c = tagCounters(t.state);
      rates.add(tk, c);
      const ts = t.state || {};
      tb.append(h('tr', { class: 'tagrow', 'data-tag': `${q.name}/${t.name}` },
        h('td', {}, h('a', { href: tagHref(q.name, t.name) }, t.name)),
        h('td', { class: 'num hide-narrow' }),
        h('td', { class: 'num', 'data-col': 'available' }, num(ts.available)),
        h('td', { class: 'num', 'data-col': 'in_flight' }, num(ts.in_flight)),
        h('td', { class: 'num hide-narrow' }, age(ts.oldest_available_age_seconds)),
        h('td', { class: 'num', 'data-col': 'dead' }, num(ts.dead_total)),
        h('td', { class: 'hide-narrow' }, sparkline([rates.series(tk, 'in'), rates.series(tk, 'deleted')], { label: `${t.name}: in and deleted per second`, height: 18 }))));
    }
    if (tags.length > TAGS_SHOWN) {
      tb.append(h('tr', { class: 'tagrow' }, h('td', { colspan: 7 }, h('a', { href: queueHref(q.name) }, `${tags.length - TAGS_SHOWN} more tags…`))));
    }
  });
  table.append(tb);
}

function drawPager(pager, list, prefix, token, size, count) {
  clear(pager);
  const pageNo = back.tokens.length + 1;
  const prev = h('button', { type: 'button', class: 'ghost', disabled: pageNo === 1, id: 'prev-page' }, '← Previous');
  prev.addEventListener('click', () => {
    const t = back.tokens.pop();
    go('/queues', { prefix, size: size === 50 ? '' : size, token: t });
  });
  const next = h('button', { type: 'button', class: 'ghost', disabled: !list.next_page_token, id: 'next-page' }, 'Next →');
  next.addEventListener('click', () => {
    back.tokens.push(token);
    go('/queues', { prefix, size: size === 50 ? '' : size, token: list.next_page_token });
  });
  add(pager, [prev, h('span', { class: 'muted' }, `page ${pageNo} · ${count} queue${count === 1 ? '' : 's'}`), next]);
}

// myQueues: a server whose ListQueues is an admin's only (before tagq
// listed a principal's own queues): a principal sees the queues and
// prefixes it has permissions on, and can open a queue by name.
async function myQueues(body, denied) {
  auth.principal = denied.metadata.principal || auth.principal;
  const who = document.getElementById('who');
  if (auth.principal) who.textContent = `signed in: ${auth.principal}`;
  add(body, h('p', { class: 'note' }, 'Listing every queue is an admin\'s call. These are the queues and prefixes you have permissions on.'));
  const open = h('input', { id: 'open-queue', 'data-search': true, placeholder: 'queue name', required: true, pattern: '[A-Za-z0-9_\\-]{1,80}' });
  const form = h('form', { class: 'toolbar' }, h('label', { class: 'grow', for: 'open-queue' }, 'Open a queue', open), h('button', { type: 'submit' }, 'Open'));
  form.addEventListener('submit', (e) => { e.preventDefault(); location.hash = queueHref(open.value.trim()); });
  body.append(form);
  if (!auth.principal) return;
  const r = await get(`/v1/permissions?principal=${enc(auth.principal)}`);
  const grants = r.grants || [];
  const rows = grants.map((g) => h('tr', {},
    h('td', {}, g.queue.endsWith('*') ? h('code', {}, g.queue) : h('a', { href: queueHref(g.queue) }, g.queue)),
    h('td', {}, String(g.permission || '').replace(/^PERMISSION_/, '')),
    h('td', {}, (g.tags || []).join(', ') || 'any')));
  body.append(h('div', { class: 'table-wrap' }, h('table', {},
    h('thead', {}, h('tr', {}, h('th', {}, 'Queue or prefix'), h('th', {}, 'Permission'), h('th', {}, 'Tags'))),
    h('tbody', {}, rows.length ? rows : h('tr', {}, h('td', { colspan: 3, class: 'empty' }, 'No permissions set (queues you create are yours).'))))));
}

// pool maps items through fn with at most n calls at a time.
export async function pool(items, n, fn) {
  const out = new Array(items.length);
  let i = 0;
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, async () => {
    while (i < items.length) { const j = i++; out[j] = await fn(items[j], j); }
  }));
  return out;
}

// fieldInput makes the input of a queue field (from the schema).
export function fieldInput(f, value) {
  const id = `f-${f.name}`;
  if (f.kind === 'bool') {
    return h('label', { class: 'check', title: f.help }, h('input', { type: 'checkbox', id, name: f.name, checked: !!value }), label(f.name));
  }
  let input;
  if (f.kind === 'enum') {
    input = h('select', { id, name: f.name }, f.values.map((v) => h('option', { value: v, selected: v === value }, v)));
  } else {
    input = h('input', { id, name: f.name, type: f.kind === 'int' ? 'number' : 'text', value: value ?? '', placeholder: f.kind === 'int' ? 'default' : '' });
    if (f.kind === 'int') input.setAttribute('min', '0');
  }
  return h('label', { for: id, title: f.help }, label(f.name), input);
}

// readField: a field's value from its form, or undefined when left empty.
export function readField(form, f) {
  const el = form.elements[f.name];
  if (!el) return undefined;
  if (f.kind === 'bool') return el.checked;
  const v = el.value.trim();
  if (v === '') return undefined;
  return f.kind === 'int' ? Number(v) : v;
}

export async function newQueuePage(main, page) {
  const fields = (await queueFields()).filter((f) => f.name !== 'name');
  const params = await createParams();
  const name = h('input', { id: 'f-name', name: 'name', required: true, pattern: '[A-Za-z0-9_\\-]{1,80}', autocomplete: 'off', value: page.query.name || '' });
  const hint = h('div', { class: 'muted', 'aria-live': 'polite' });
  const dlq = h('input', { id: 'f-rp-dlq', name: 'rp_dlq', placeholder: 'none', autocomplete: 'off' });
  const mrc = h('input', { id: 'f-rp-max', name: 'rp_max', type: 'number', min: 1, max: 1000, placeholder: '5' });
  const errors = h('div', { class: 'errors' });
  const submit = h('button', { type: 'submit' }, 'Create queue');
  const form = h('form', { class: 'grid panel', id: 'new-queue-form' },
    h('label', { for: 'f-name' }, 'Name', name),
    fields.map((f) => fieldInput(f, f.kind === 'enum' ? f.values[0] : undefined)),
    params.map((p) => h('label', { class: 'check', title: p.help }, h('input', { type: 'checkbox', id: `p-${p.name}`, name: `param_${p.name}` }), label(p.name))),
    h('label', { for: 'f-rp-dlq', title: 'Redrive policy: the dead-letter queue (flagged as one) its tags dead-letter to' }, 'Dead-letter queue', dlq),
    h('label', { for: 'f-rp-max' }, 'Max receive count', mrc),
    h('div', { class: 'buttons' }, submit, hint), errors);
  // A principal may create a queue it would have ADMIN_QUEUE on.
  const check = async () => {
    const n = name.value.trim();
    if (!n || auth.mode !== 'user') { hint.textContent = ''; submit.disabled = false; return; }
    const ok = await may(n, 'admin');
    submit.disabled = !ok;
    hint.textContent = ok ? '' : `You may not create ${n}: it needs ADMIN_QUEUE on that name.`;
  };
  name.addEventListener('change', check);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clear(errors);
    const q = { name: name.value.trim() };
    for (const f of fields) {
      const v = readField(form, f);
      if (v !== undefined && !(f.kind === 'enum' && v.endsWith('_UNSPECIFIED'))) q[f.name] = v;
    }
    if (dlq.value.trim()) q.redrive_policy = { dead_letter_queue: dlq.value.trim(), max_receive_count: Number(mrc.value || 5) };
    const qs = params.filter((p) => form.elements[`param_${p.name}`].checked).map((p) => `${enc(p.name)}=true`).join('&');
    try {
      await call('POST', `/v1/queues${qs ? `?${qs}` : ''}`, q);
      toast(`Queue ${q.name} created`);
      location.hash = queueHref(q.name);
    } catch (err) {
      errors.append(errorBox(err));
    }
  });
  add(main, [crumbs(), h('h1', {}, 'New queue'), form]);
  name.focus();
  await check();
}
