// The queues page (search, paging, per-tag counters, rates) and the new
// queue form.
import { auth, call, enc, get, may } from './api.js';
import { add, age, clear, errorBox, h, num, Rates, sparkline, tagCounters, toast } from './dom.js';
import { crumbs, go, queueHref, tagHref } from './nav.js';
import { createParams, label, queueFields } from './schema.js';

// Readings of counters across visits of the page (bounded per key and in keys).
export const rates = new Rates(60, 5000);

const TAGS_SHOWN = 6;

// Columns that sort (ListQueues' order_by keys), and the direction a first
// click picks: names A-Z, numbers largest first.
const SORTS = { name: 'asc', messages: 'desc', available: 'desc', in_flight: 'desc', oldest_available_age: 'desc', dead_total: 'desc' };

// The queues page: one ListQueues call a reading (QUEUE_VIEW_TAGS: every
// queue of the page with its tags' state), searched by any part of the
// name, sorted by any column, paged by number (skip) with the total.
// The first reading by name paints the queues at once (the basic view),
// then their tags.
export async function queuesPage(main, page) {
  const query = page.query;
  const contains = query.q || '';
  const prefix = query.prefix || '';
  const size = [25, 50, 100, 200].includes(Number(query.size)) ? Number(query.size) : 50;
  const [key, dir] = (query.sort || 'name').split(' ');
  const sort = SORTS[key] ? { key, desc: (dir || (key === 'name' ? 'asc' : 'desc')) === 'desc' } : { key: 'name', desc: false };
  const pageNo = Math.max(1, Math.floor(Number(query.p) || 1));
  const state = { contains, prefix, size, sort, pageNo };
  const nav = (change) => {
    const n = { ...state, ...change };
    const sortText = n.sort.key === 'name' && !n.sort.desc ? '' : `${n.sort.key} ${n.sort.desc ? 'desc' : 'asc'}`;
    go('/queues', { q: n.contains, prefix: n.prefix, size: n.size === 50 ? '' : n.size, sort: sortText, p: n.pageNo > 1 ? n.pageNo : '' });
  };

  const search = h('input', { type: 'search', value: contains, 'data-search': true, id: 'queue-search', placeholder: 'Any part of a name', 'aria-label': 'Search queue names (press / to focus)' });
  let timer = 0;
  search.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => nav({ contains: search.value.trim(), pageNo: 1 }), 350);
  });
  const sizeSel = h('select', { id: 'page-size', onchange: (e) => nav({ size: Number(e.target.value), pageNo: 1 }) },
    [25, 50, 100, 200].map((n) => h('option', { value: n, selected: n === size }, `${n} per page`)));
  add(main, [
    h('h1', {}, 'Queues'),
    h('div', { class: 'toolbar' },
      h('label', { class: 'grow', for: 'queue-search' }, 'Search', search),
      prefix ? h('span', { class: 'badge', id: 'prefix-filter' }, `prefix ${prefix}`) : null,
      h('label', { for: 'page-size' }, 'Page size', sizeSel),
      auth.create ? h('a', { class: 'button', href: '#/new-queue' }, 'New queue') : null),
  ]);
  const body = h('div', { id: 'queues' });
  const pager = h('nav', { class: 'toolbar pager', 'aria-label': 'Pages of queues' });
  add(main, [body, pager]);

  const url = (view) => `/v1/queues?${new URLSearchParams({
    page_size: size, skip: (pageNo - 1) * size, prefix, name_contains: contains, view,
    order_by: sort.key === 'name' && !sort.desc ? '' : `${sort.key}${sort.desc ? ' desc' : ''}`,
  })}`;
  let first;
  try {
    // By name the basic view is one read of the page's queues: paint those
    // first. Any other order reads every tag anyway.
    first = await get(url(sort.key === 'name' ? 'QUEUE_VIEW_BASIC' : 'QUEUE_VIEW_TAGS'));
  } catch (e) {
    if (e.reason === 'PERMISSION_DENIED' && auth.mode === 'user') return myQueues(body, e);
    throw e;
  }
  const table = h('table', { id: 'queue-table' });
  if (auth.mode === 'user') add(body, h('p', { class: 'note' }, 'The queues you hold a permission on.'));
  add(body, h('div', { class: 'table-wrap' }, table));
  const draw = (list, withTags) => {
    drawTable(table, list.queues || [], withTags, sort, (s) => { const [k, d] = s.split(' '); nav({ sort: { key: k, desc: d === 'desc' }, pageNo: 1 }); });
    drawPager(pager, Number(list.total_size || 0), state, nav);
  };
  draw(first, sort.key !== 'name');
  await page.every(size > 50 ? 10000 : 0, async () => {
    const list = await get(url('QUEUE_VIEW_TAGS'));
    if (page.live) draw(list, true);
  });
}

// The queue row's numbers: Messages is what the queue holds (once, however
// many tags read it); Available and Oldest are its tag furthest behind's
// (not a sum, which would count a message once per tag); In flight adds up
// what its tags have out; Dead-lettered adds up what its tags dead-lettered
// since they were created (moving dead letters back does not lower it: a
// dead-letter queue's own Messages is what waits there). ListQueues'
// order_by sorts by the same numbers.
export const QUEUE_ROW_NOTE = 'Queue rows: Messages is what the queue holds; Available and Oldest are those of its tag furthest behind; In flight adds up its tags\'; Dead-lettered counts what its tags dead-lettered since they were created (a dead-letter queue\'s Messages is what waits there).';

export function queueNumbers(tags) {
  const st = (t) => t.state || {};
  const max = (k) => (tags.length ? Math.max(...tags.map((t) => Number(st(t)[k] || 0))) : 0);
  const sum = (k) => tags.reduce((a, t) => a + Number(st(t)[k] || 0), 0);
  return { available: max('available'), in_flight: sum('in_flight'), oldest: max('oldest_available_age_seconds'), dead: sum('dead_total') };
}

// sortHeader is a column header that sorts by key when clicked.
function sortHeader(text, key, sort, onSort, cls) {
  const on = sort.key === key;
  const next = on ? `${key} ${sort.desc ? 'asc' : 'desc'}` : `${key} ${SORTS[key]}`;
  return h('th', { scope: 'col', class: cls, 'aria-sort': on ? (sort.desc ? 'descending' : 'ascending') : 'none' },
    h('button', { type: 'button', class: 'sort', 'data-sort': key, onclick: () => onSort(next),
      title: `Sort by ${text.toLowerCase()}${on ? (sort.desc ? ', ascending' : ', descending') : ''}` },
    text, h('span', { 'aria-hidden': 'true', class: 'arrow' }, on ? (sort.desc ? ' ▼' : ' ▲') : '')));
}

function drawTable(table, queues, withTags, sort, onSort) {
  clear(table);
  add(table, h('caption', { class: 'muted' }, QUEUE_ROW_NOTE));
  add(table, h('thead', {}, h('tr', {},
    sortHeader('Queue / tag', 'name', sort, onSort), sortHeader('Messages', 'messages', sort, onSort, 'num hide-narrow'),
    sortHeader('Available', 'available', sort, onSort, 'num'), sortHeader('In flight', 'in_flight', sort, onSort, 'num'),
    sortHeader('Oldest', 'oldest_available_age', sort, onSort, 'num hide-narrow'), sortHeader('Dead-lettered', 'dead_total', sort, onSort, 'num'),
    h('th', { scope: 'col', class: 'hide-narrow' }, 'In / deleted per s'))));
  const tb = h('tbody');
  if (!queues.length) tb.append(h('tr', {}, h('td', { colspan: 7, class: 'empty' }, 'No queues.')));
  for (const q of queues) {
    const tags = q.tags || [];
    const n = queueNumbers(tags);
    const sum = (k) => tags.reduce((a, t) => a + Number((t.state || {})[k] || 0), 0);
    const key = `q:${q.name}`;
    // In: a message sent enters each tag that admits it once; the largest is the queue's.
    if (withTags) rates.add(key, { in: Math.max(0, ...tags.map((t) => tagCounters(t.state).in)), deleted: sum('deleted_total') });
    const st = q.state || {};
    const cell = (v) => (withTags ? num(v) : h('span', { class: 'muted', title: 'reading its tags…' }, '…'));
    tb.append(h('tr', { 'data-queue': q.name },
      h('th', { scope: 'row' }, h('a', { href: queueHref(q.name) }, q.name), ' ', q.dead_letter_queue ? h('span', { class: 'badge dlq' }, 'DLQ') : null,
        h('span', { class: 'muted' }, ` ${num(st.tag_count)} tag${Number(st.tag_count) === 1 ? '' : 's'}`)),
      h('td', { class: 'num hide-narrow', 'data-col': 'messages' }, num(st.retained_messages)),
      h('td', { class: 'num', 'data-col': 'available' }, cell(n.available)),
      h('td', { class: 'num', 'data-col': 'in_flight' }, cell(n.in_flight)),
      h('td', { class: 'num hide-narrow' }, withTags ? age(n.oldest) : ''),
      h('td', { class: 'num', 'data-col': 'dead' }, cell(n.dead)),
      h('td', { class: 'hide-narrow' }, sparkline([rates.series(key, 'in'), rates.series(key, 'deleted')], { label: `${q.name}: messages in (the tag admitting most) and deletes (all tags) per second` }))));
    for (const t of tags.slice(0, TAGS_SHOWN)) {
      const tk = `t:${q.name}/${t.name}`;
      rates.add(tk, tagCounters(t.state));
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
  }
  table.append(tb);
}

// drawPager: previous, a page number to jump to, of how many, the total,
// next.
function drawPager(pager, total, state, nav) {
  clear(pager);
  const pages = Math.max(1, Math.ceil(total / state.size));
  const prev = h('button', { type: 'button', class: 'ghost', disabled: state.pageNo <= 1, id: 'prev-page', onclick: () => nav({ pageNo: state.pageNo - 1 }) }, '← Previous');
  const next = h('button', { type: 'button', class: 'ghost', disabled: state.pageNo >= pages, id: 'next-page', onclick: () => nav({ pageNo: state.pageNo + 1 }) }, 'Next →');
  const jump = h('input', { type: 'number', id: 'page-jump', min: 1, max: pages, value: state.pageNo, class: 'narrow' });
  const form = h('form', { class: 'jump' }, h('label', { for: 'page-jump', class: 'inline' }, 'Page', jump), h('span', { id: 'page-count' }, `of ${num(pages)}`),
    h('button', { type: 'submit', class: 'ghost small' }, 'Go'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const n = Math.min(pages, Math.max(1, Math.floor(Number(jump.value) || 1)));
    nav({ pageNo: n });
  });
  add(pager, [prev, form, h('span', { class: 'muted', id: 'queue-total' }, `${num(total)} queue${total === 1 ? '' : 's'}`), next]);
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
    retryInputs('f', null),
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
      if (form.elements[f.name]?.disabled) continue;
      const v = readField(form, f);
      if (v !== undefined && !(f.kind === 'enum' && v.endsWith('_UNSPECIFIED'))) q[f.name] = v;
    }
    if (dlq.value.trim()) q.redrive_policy = { dead_letter_queue: dlq.value.trim(), max_receive_count: Number(mrc.value || 5) };
    const rb = readRetry(form);
    if (rb) q.retry_policy = rb;
    const qs = params.filter((p) => form.elements[`param_${p.name}`].checked).map((p) => `${enc(p.name)}=true`).join('&');
    try {
      await call('POST', `/v1/queues${qs ? `?${qs}` : ''}`, q);
      toast(`Queue ${q.name} created`);
      location.hash = queueHref(q.name);
    } catch (err) {
      errors.append(errorBox(err));
    }
  });
  // Partitions: 1-64, and only one for a dead-letter or priority queue
  // (tagqd refuses more): the field is hidden and disabled while either is
  // chosen, so its value is not sent.
  const parts = form.elements.partitions;
  if (parts) {
    parts.setAttribute('min', '1');
    parts.setAttribute('max', '64');
    parts.setAttribute('placeholder', '1');
    const single = ['dead_letter_queue', 'priority_queue'].map((n) => form.elements[n]).filter(Boolean);
    const sync = () => {
      const one = single.some((c) => c.checked);
      parts.disabled = one;
      parts.closest('label').hidden = one;
    };
    single.forEach((c) => c.addEventListener('change', sync));
    sync();
  }
  add(main, [crumbs(), h('h1', {}, 'New queue'), form]);
  name.focus();
  await check();
}

// retryInputs: the retry policy's two fields (empty: no policy), ids
// <prefix>-rb-min and <prefix>-rb-max.
export function retryInputs(prefix, rb) {
  const title = 'Retry backoff: a message that comes back to a tag waits between min·2^(n-1) and twice that (at most max) seconds after its n-th receive; empty: none';
  return [
    h('label', { for: `${prefix}-rb-min`, title }, 'Retry backoff min (s)',
      h('input', { id: `${prefix}-rb-min`, name: 'rb_min', type: 'number', min: 0, max: 43200, placeholder: 'none', value: rb ? rb.min_backoff_seconds || 0 : '' })),
    h('label', { for: `${prefix}-rb-max`, title }, 'Retry backoff max (s)',
      h('input', { id: `${prefix}-rb-max`, name: 'rb_max', type: 'number', min: 0, max: 43200, placeholder: 'none', value: rb ? rb.max_backoff_seconds || 0 : '' })),
  ];
}

// readRetry: the policy the form's retry inputs give (null: both empty;
// one empty takes the other's value).
export function readRetry(form) {
  const lo = form.elements.rb_min.value.trim();
  const hi = form.elements.rb_max.value.trim();
  if (!lo && !hi) return null;
  return { min_backoff_seconds: Number(lo || hi), max_backoff_seconds: Number(hi || lo) };
}
