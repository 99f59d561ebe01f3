// A queue (attributes, redrive policy, tags, source queues; edit, purge,
// delete, new tag, send) and a tag (counters, filter, rates chart).
import { auth, call, enc, get, may, mayAll, permission, post } from './api.js';
import { add, age, chart, clear, confirm, errorBox, h, legend, num, rate, tagCounters, time, toast, sparkline } from './dom.js';
import { crumbs, href, q as qe, queueHref, tagHref } from './nav.js';
import { historySection } from './history.js';
import { fieldInput, rates, readField, readRetry, retryInputs } from './queues.js';
import { IMMUTABLE, label, queueFields } from './schema.js';

const HIDDEN = new Set(['name', 'state', 'source_queues', 'redrive_policy', 'retry_policy', 'user_attributes']);

function value(v) {
  if (v === null || v === undefined || v === '') return h('span', { class: 'muted' }, 'default');
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v === 'string' && /^\d{4}-\d\d-\d\dT/.test(v)) return time(v);
  if (typeof v === 'object') return h('code', {}, JSON.stringify(v));
  return typeof v === 'number' ? num(v) : String(v);
}

const kv = (pairs) => h('dl', { class: 'kv' }, pairs.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));

export async function queuePage(main, page) {
  const name = page.params[0];
  const can = await mayAll(name, ['info', 'admin', 'peek', 'send']);
  if (!can.info && !can.admin) {
    add(main, [h('h1', {}, name), errorBox({ reason: 'PERMISSION_DENIED', message: `You may not see queue ${name}: it needs GET_QUEUE_INFO.`, metadata: {} })]);
    return;
  }
  let queue = (await get(`/v1/queues/${enc(name)}`)).queue;
  const dlqLinks = queue.dead_letter_queue && (can.peek || can.info)
    ? [can.peek ? h('a', { class: 'button ghost', href: href(`/queue/${qe(name)}/dead`) }, 'Dead letters') : null,
      h('a', { class: 'button ghost', href: href(`/queue/${qe(name)}/moves`) }, 'Moves')] : [];
  const actions = h('div', { class: 'actions' },
    can.peek ? h('a', { class: 'button ghost', href: href(`/queue/${qe(name)}/peek`) }, 'Peek messages') : null,
    dlqLinks,
    can.admin ? h('button', { type: 'button', class: 'ghost', id: 'purge', onclick: () => purge(name) }, 'Purge') : null,
    can.admin ? h('button', { type: 'button', class: 'danger', id: 'delete-queue', onclick: () => deleteQueue(name, queue) }, 'Delete queue') : null);
  add(main, [
    crumbs(),
    h('h1', {}, name, queue.dead_letter_queue ? h('span', { class: 'badge dlq' }, 'dead-letter queue') : null,
      queue.partitions > 1 ? h('span', { class: 'badge', id: 'partitions', title: 'Every tag reads every partition; the counters are sums over them' }, `${queue.partitions} partitions`) : null),
    actions,
  ]);
  const stateBox = h('div', { class: 'counters', id: 'queue-state' });
  const attrs = h('div', { class: 'panel', id: 'queue-attributes' });
  const tagsBox = h('div', { id: 'tags' });
  add(main, [h('h2', {}, 'State'), stateBox, historySection(page, name), h('h2', {}, 'Tags'), tagsBox, h('h2', {}, 'Attributes'), attrs]);

  const drawAttrs = () => {
    clear(attrs);
    const pairs = Object.entries(queue).filter(([k]) => !HIDDEN.has(k)).map(([k, v]) => [label(k),
      k === 'default_tag_name' && !v ? h('span', { class: 'muted' }, 'none (created without a default tag)') : value(v)]);
    const rp = queue.redrive_policy;
    pairs.push(['Redrive policy', rp && rp.dead_letter_queue
      ? h('span', {}, 'to ', h('a', { href: queueHref(rp.dead_letter_queue) }, rp.dead_letter_queue), ` after ${rp.max_receive_count} receives`)
      : h('span', { class: 'muted' }, 'none')]);
    const rb = queue.retry_policy;
    pairs.push(['Retry backoff', rb
      ? `${rb.min_backoff_seconds || 0}s to ${rb.max_backoff_seconds || 0}s, doubling per receive, with jitter`
      : h('span', { class: 'muted' }, 'none (redelivered at once)')]);
    if (queue.dead_letter_queue) {
      const src = queue.source_queues || [];
      pairs.push(['Source queues', src.length ? src.flatMap((s, i) => [i ? ', ' : '', h('a', { href: queueHref(s) }, s)]) : h('span', { class: 'muted' }, 'none')]);
    }
    const ua = Object.entries(queue.user_attributes || {});
    if (ua.length) pairs.push(['User attributes', ua.map(([k, v]) => `${k}=${v}`).join(', ')]);
    attrs.append(kv(pairs));
  };
  const drawState = () => {
    clear(stateBox);
    for (const [k, v] of Object.entries(queue.state || {})) {
      if (v !== null && typeof v === 'object') continue; // default_tag: in the tags table
      stateBox.append(h('div', { class: 'counter', 'data-state': k }, h('div', { class: 'v' }, num(v)), h('div', { class: 'k' }, label(k))));
    }
  };
  drawAttrs();
  drawState();

  if (can.admin) main.append(await editForm(name, () => queue, (q) => { queue = q; drawAttrs(); }));
  if (can.admin) main.append(newTagForm(name));
  if (can.send) main.append(sendForm(name, queue));

  await page.every(4000, async () => {
    const [q, tl] = await Promise.all([get(`/v1/queues/${enc(name)}`), get(`/v1/queues/${enc(name)}/tags?page_size=100`)]);
    if (!page.live) return;
    queue = q.queue;
    drawState();
    drawTags(tagsBox, name, tl.tags || [], can.admin);
  });
}

function drawTags(box, queue, tags, admin) {
  clear(box);
  const rows = tags.map((t) => {
    const st = t.state || {};
    const key = `t:${queue}/${t.name}`;
    rates.add(key, tagCounters(st));
    return h('tr', { 'data-tag': t.name },
      h('th', { scope: 'row' }, h('a', { href: tagHref(queue, t.name) }, t.name)),
      ['available', 'in_flight', 'delayed'].map((k) => h('td', { class: `num${k === 'delayed' ? ' hide-narrow' : ''}`, 'data-col': k }, num(st[k]))),
      h('td', { class: 'num hide-narrow' }, age(st.oldest_available_age_seconds)),
      ['received_total', 'deleted_total', 'dead_total'].map((k) => h('td', { class: `num${k === 'dead_total' ? '' : ' hide-narrow'}`, 'data-col': k }, num(st[k]))),
      h('td', { class: 'hide-narrow' }, sparkline([rates.series(key, 'in'), rates.series(key, 'deleted')], { label: `${t.name}: in and deleted per second` })),
      h('td', {}, admin ? h('button', { type: 'button', class: 'ghost small', 'aria-label': `Delete tag ${t.name}`, onclick: () => deleteTag(queue, t.name) }, 'Delete') : null));
  });
  box.append(h('div', { class: 'table-wrap' }, h('table', { id: 'tag-table' },
    h('thead', {}, h('tr', {}, ['Tag', 'Available', 'In flight', 'Delayed', 'Oldest', 'Received', 'Deleted', 'Dead-lettered', 'In / deleted per s', h('span', { class: 'sr-only' }, 'Actions')]
      .map((c, i) => h('th', { scope: 'col', class: [1, 2, 3, 4, 5, 6, 7].includes(i) ? `num${[3, 4, 5, 6].includes(i) ? ' hide-narrow' : ''}` : (i === 8 ? 'hide-narrow' : '') }, c)))),
    h('tbody', {}, rows.length ? rows : h('tr', {}, h('td', { colspan: 10, class: 'empty' }, 'No tags.'))))));
}

async function purge(name) {
  if (!await confirm({ title: `Purge ${name}?`, text: 'Every message of the queue is removed, for every tag. This cannot be undone.', action: 'Purge', expect: name })) return;
  try {
    const r = await post(`/v1/queues/${enc(name)}:purge`, {});
    toast(`Purged ${num(r.purged_messages)} messages`);
  } catch (e) { toast(`${e.reason || 'Error'}: ${e.message}`, true); }
}

async function deleteQueue(name, queue) {
  if (!await confirm({ title: `Delete ${name}?`, text: 'The queue, its tags and its messages are deleted. This cannot be undone.', action: 'Delete', expect: name })) return;
  try {
    await call('DELETE', `/v1/queues/${enc(name)}`);
  } catch (e) {
    if (e.reason !== 'DEAD_LETTER_QUEUE_IN_USE') { toast(`${e.reason || 'Error'}: ${e.message}`, true); return; }
    const src = (queue.source_queues || []).join(', ');
    if (!await confirm({ title: `${name} is in use`, text: `Queues ${src} dead-letter to it. Delete it anyway and remove their redrive policies?`, action: 'Delete anyway' })) return;
    try { await call('DELETE', `/v1/queues/${enc(name)}?force=true`); } catch (e2) { toast(`${e2.reason || 'Error'}: ${e2.message}`, true); return; }
  }
  toast(`Queue ${name} deleted`);
  location.hash = href('/queues');
}

async function deleteTag(queue, tag) {
  if (!await confirm({ title: `Delete tag ${tag}?`, text: `The tag stops reading ${queue}; its counters and in-flight messages go with it.`, action: 'Delete tag', expect: tag })) return;
  try {
    await call('DELETE', `/v1/queues/${enc(queue)}/tags/${enc(tag)}`);
    toast(`Tag ${tag} deleted`);
    if (location.hash.includes('/tag/')) location.hash = queueHref(queue);
  } catch (e) { toast(`${e.reason || 'Error'}: ${e.message}`, true); }
}

// editForm: UpdateQueue with an update mask of the fields changed.
async function editForm(name, current, updated) {
  const fields = (await queueFields()).filter((f) => !IMMUTABLE.has(f.name));
  const errors = h('div', { class: 'errors' });
  const details = h('details', { class: 'panel', id: 'edit-queue' }, h('summary', {}, 'Edit attributes'));
  const build = () => {
    const q = current();
    const rp = q.redrive_policy || {};
    const rb = q.retry_policy;
    const form = h('form', { class: 'grid' },
      fields.map((f) => fieldInput(f, q[f.name])),
      h('label', { for: 'e-rp-dlq' }, 'Dead-letter queue', h('input', { id: 'e-rp-dlq', name: 'rp_dlq', value: rp.dead_letter_queue || '', placeholder: 'none' })),
      h('label', { for: 'e-rp-max' }, 'Max receive count', h('input', { id: 'e-rp-max', name: 'rp_max', type: 'number', min: 1, max: 1000, value: rp.max_receive_count || '' })),
      retryInputs('e', rb),
      h('div', { class: 'buttons' }, h('button', { type: 'submit' }, 'Save')), errors);
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      clear(errors);
      const body = { name };
      const mask = [];
      for (const f of fields) {
        const v = readField(form, f);
        const was = q[f.name];
        if (v === undefined ? was !== undefined && was !== null : String(v) !== String(was)) { mask.push(f.name); if (v !== undefined) body[f.name] = v; }
      }
      const dlq = form.elements.rp_dlq.value.trim();
      const max = Number(form.elements.rp_max.value || 0);
      if (dlq !== (rp.dead_letter_queue || '') || (dlq && max !== (rp.max_receive_count || 0))) {
        mask.push('redrive_policy');
        body.redrive_policy = dlq ? { dead_letter_queue: dlq, max_receive_count: max || 5 } : null;
      }
      const nb = readRetry(form);
      if (JSON.stringify(nb) !== JSON.stringify(rb ? { min_backoff_seconds: rb.min_backoff_seconds || 0, max_backoff_seconds: rb.max_backoff_seconds || 0 } : null)) {
        mask.push('retry_policy');
        body.retry_policy = nb;
      }
      if (!mask.length) { toast('Nothing changed'); return; }
      try {
        const r = await call('PATCH', `/v1/queues/${enc(name)}?update_mask=${enc(mask.join(','))}`, body);
        updated(r.queue);
        toast(`Saved ${mask.join(', ')}`);
        details.open = false;
      } catch (err) { errors.append(errorBox(err)); }
    });
    return form;
  };
  details.addEventListener('toggle', () => {
    if (!details.open) return;
    details.querySelector('form')?.remove();
    details.append(build());
  });
  return details;
}

function newTagForm(queue) {
  const errors = h('div', { class: 'errors' });
  const start = h('select', { id: 't-start', name: 'start' },
    h('option', { value: 'now' }, 'From now on'), h('option', { value: 'all' }, 'Every retained message'), h('option', { value: 'time' }, 'From a time…'));
  const at = h('input', { id: 't-at', name: 'at', type: 'datetime-local', disabled: true });
  start.addEventListener('change', () => { at.disabled = start.value !== 'time'; });
  const form = h('form', { class: 'grid', id: 'new-tag-form' },
    h('label', { for: 't-name' }, 'Name', h('input', { id: 't-name', name: 'tname', required: true, pattern: '[A-Za-z0-9_\\-]{1,80}', autocomplete: 'off' })),
    h('label', { for: 't-start' }, 'Start', start),
    h('label', { for: 't-at' }, 'Start time (local)', at),
    h('label', { for: 't-vis' }, 'Visibility timeout (s)', h('input', { id: 't-vis', name: 'vis', type: 'number', min: 0, max: 43200, placeholder: 'queue\'s' })),
    h('label', { for: 't-filter', title: 'One condition a line: an attribute name (present), or name=value' }, 'Filter (name or name=value, a line each)',
      h('textarea', { id: 't-filter', name: 'filter', rows: 2, spellcheck: 'false' })),
    h('label', { for: 't-op' }, 'Conditions combine with', h('select', { id: 't-op', name: 'op' }, h('option', { value: 'OPERATOR_AND' }, 'AND'), h('option', { value: 'OPERATOR_OR' }, 'OR'))),
    h('div', { class: 'buttons' }, h('button', { type: 'submit' }, 'Create tag')), errors);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clear(errors);
    const el = form.elements;
    const tag = { name: el.tname.value.trim() };
    if (start.value === 'all') tag.start_time = '1970-01-01T00:00:00Z';
    if (start.value === 'time' && at.value) tag.start_time = new Date(at.value).toISOString();
    if (el.vis.value !== '') tag.visibility_timeout_seconds = Number(el.vis.value);
    const conds = el.filter.value.split('\n').map((l) => l.trim()).filter(Boolean).map((l) => {
      const i = l.indexOf('=');
      return i < 0 ? { name: l } : { name: l.slice(0, i).trim(), string_value: l.slice(i + 1).trim() };
    });
    if (conds.length) tag.filter = { operator: el.op.value, conditions: conds };
    try {
      await post(`/v1/queues/${enc(queue)}/tags`, tag);
      toast(`Tag ${tag.name} created`);
      form.reset();
      at.disabled = true;
    } catch (err) { errors.append(errorBox(err)); }
  });
  return h('details', { class: 'panel', id: 'new-tag' }, h('summary', {}, 'New tag'), form);
}

export function toBase64(text) {
  const bytes = new TextEncoder().encode(text);
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

// sendForm: body, attributes, delay, and the topic (required on a topic
// queue) or priority (on a priority queue) the queue takes.
function sendForm(queue, q) {
  const errors = h('div', { class: 'errors' });
  const form = h('form', { class: 'grid', id: 'send-form' },
    h('label', { for: 's-body' }, 'Body (text)', h('textarea', { id: 's-body', name: 'body', rows: 3, spellcheck: 'false' })),
    h('label', { for: 's-attrs' }, 'Attributes (name=value, a line each)', h('textarea', { id: 's-attrs', name: 'attrs', rows: 3, spellcheck: 'false' })),
    q.topic_queue ? h('label', { for: 's-topic', title: 'A topic\'s messages reach each tag in send order, one in flight at a time' }, 'Topic',
      h('input', { id: 's-topic', name: 'topic', required: true, maxlength: 128, pattern: '[A-Za-z0-9_.:\\-]{1,128}', autocomplete: 'off', spellcheck: 'false' })) : null,
    q.priority_queue ? h('label', { for: 's-priority', title: '1 is the highest' }, 'Priority (1–16)',
      h('input', { id: 's-priority', name: 'priority', type: 'number', min: 1, max: 16, placeholder: '8' })) : null,
    h('label', { for: 's-delay' }, 'Delay (s)', h('input', { id: 's-delay', name: 'delay', type: 'number', min: 0, max: 900, placeholder: 'queue\'s' })),
    h('div', { class: 'buttons' }, h('button', { type: 'submit' }, 'Send')), errors);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clear(errors);
    const el = form.elements;
    const msg = { body: toBase64(el.body.value) };
    const attrs = {};
    for (const line of el.attrs.value.split('\n').map((l) => l.trim()).filter(Boolean)) {
      const i = line.indexOf('=');
      attrs[i < 0 ? line : line.slice(0, i).trim()] = { string_value: i < 0 ? '' : line.slice(i + 1).trim() };
    }
    if (Object.keys(attrs).length) msg.attributes = attrs;
    if (el.delay.value !== '') msg.delay_seconds = Number(el.delay.value);
    if (el.topic) msg.topic = el.topic.value.trim();
    if (el.priority && el.priority.value !== '') msg.priority = Number(el.priority.value);
    try {
      const r = await post(`/v1/queues/${enc(queue)}/messages`, msg);
      toast(`Sent ${r.message_id || ''}`);
      el.body.value = '';
    } catch (err) { errors.append(errorBox(err)); }
  });
  return h('details', { class: 'panel', id: 'send' }, h('summary', {}, 'Send a message'), form);
}

export async function tagPage(main, page) {
  const [queue, name] = page.params;
  const can = await mayAll(queue, ['info', 'admin', 'peek']);
  add(main, [crumbs(queue), h('h1', {}, name, h('span', { class: 'badge' }, 'tag'))]);
  // The tag first: a tag that does not exist gets its error, and no actions.
  const first = (await get(`/v1/queues/${enc(queue)}/tags/${enc(name)}`)).tag;
  add(main, h('div', { class: 'actions' },
    can.peek ? h('a', { class: 'button ghost', href: href(`/queue/${qe(queue)}/peek`, { tag: name }) }, 'Peek messages') : null,
    can.admin ? h('button', { type: 'button', class: 'danger', id: 'delete-tag', onclick: () => deleteTag(queue, name) }, 'Delete tag') : null));
  let read = first;
  if (await maySeek(queue, name)) main.append(seekForm(queue, name, (t) => { read = t; page.now(); }));
  const counters = h('div', { class: 'counters', id: 'tag-counters' });
  const info = h('div', { class: 'panel', id: 'tag-info' });
  const plot = h('div', { id: 'tag-chart' });
  add(main, [h('h2', {}, 'Counters'), counters, h('h2', {}, 'Rates'), plot, historySection(page, queue, name), h('h2', {}, 'Settings'), info]);
  const key = `t:${queue}/${name}`;
  const names = [['in', 'in (sent to it, moved back, replayed)'], ['received', 'received'], ['deleted', 'deleted'], ['dead', 'dead-lettered']];
  await page.every(3000, async () => {
    const t = read || (await get(`/v1/queues/${enc(queue)}/tags/${enc(name)}`)).tag;
    read = null;
    if (!page.live) return;
    const st = t.state || {};
    rates.add(key, tagCounters(st));
    clear(counters);
    for (const [k, v] of Object.entries(st)) {
      counters.append(h('div', { class: 'counter', 'data-counter': k },
        h('div', { class: 'v' }, k === 'oldest_available_age_seconds' ? age(v) : num(v)), h('div', { class: 'k' }, label(k.replace(/_seconds$/, '')))));
    }
    const list = rates.samples.get(key) || [];
    const secs = list.length > 1 ? (list[list.length - 1].t - list[0].t) / 1000 : 0;
    clear(plot).append(
      legend(names.map(([k, l]) => `${l}: ${rate(rates.last(key, k))}/s`)),
      chart(names.map(([k, l]) => [l, rates.series(key, k)]), { label: `Rates of tag ${name}, per second`, seconds: secs }));
    const f = t.filter;
    clear(info).append(kv([
      ['Start time', t.start_time ? (t.start_time.startsWith('1970-01-01') ? 'every retained message' : time(t.start_time)) : 'from its creation on'],
      ['Filter', f && (f.conditions || []).length
        ? (f.conditions.map((c) => (c.string_value !== undefined && c.string_value !== null ? `${c.name} = "${c.string_value}"` : `${c.name} present`))
          .join(f.operator === 'OPERATOR_OR' ? ' OR ' : ' AND '))
        : h('span', { class: 'muted' }, 'none: every message')],
      ['Visibility timeout', t.visibility_timeout_seconds !== undefined && t.visibility_timeout_seconds !== null ? `${t.visibility_timeout_seconds} s` : h('span', { class: 'muted' }, 'the queue\'s')],
      ['Created', time(t.create_time)],
      ['User attributes', Object.entries(t.user_attributes || {}).map(([k, v]) => `${k}=${v}`).join(', ') || '—'],
    ]));
  });
}


// maySeek: a seek needs HANDLE on the queue (receive and settle), for this
// tag when the caller's grant limits receiving to tags (DESIGN S22, S18).
async function maySeek(queue, tag) {
  if (!(await may(queue, 'receive')) || !(await may(queue, 'handle'))) return false;
  if (auth.mode !== 'user') return true;
  const tags = (await permission(queue)).tags || [];
  return !tags.length || tags.includes(tag);
}

// seekForm moves the tag's cursor (SeekTag): back to replay, forward to
// skip. done gets the tag as the seek answered it.
function seekForm(queue, tag, done) {
  const errors = h('div', { class: 'errors' });
  const to = h('select', { id: 'k-to', name: 'to' },
    h('option', { value: 'oldest' }, 'The oldest retained message (replay all)'),
    h('option', { value: 'time' }, 'A time…'),
    h('option', { value: 'id' }, 'A message id…'),
    h('option', { value: 'now' }, 'Now (skip everything waiting)'));
  const at = h('input', { id: 'k-at', name: 'at', type: 'datetime-local', step: 1, disabled: true, required: true });
  const id = h('input', { id: 'k-id', name: 'id', disabled: true, required: true, pattern: '[0-9]+-[0-9]+', placeholder: '1763800000000-0', autocomplete: 'off', spellcheck: 'false' });
  to.addEventListener('change', () => { at.disabled = to.value !== 'time'; id.disabled = to.value !== 'id'; });
  const form = h('form', { class: 'grid', id: 'seek-form' },
    h('label', { for: 'k-to' }, 'Move the cursor to', to),
    h('label', { for: 'k-at' }, 'Time (local): messages sent at or after it', at),
    h('label', { for: 'k-id' }, 'Message id: it and every later message', id),
    h('p', { class: 'note', id: 'seek-note' }, `What follows the cursor becomes available again to ${tag} alone, in send order, with receive counts from 1; `
      + `what ${tag} has in flight is dropped from it, and those receipt handles no longer settle anything. `
      + 'Other tags do not move. Without "retain acknowledged messages", messages every tag had finished are gone and do not come back.'),
    h('div', { class: 'buttons' }, h('button', { type: 'submit', id: 'seek-button' }, 'Seek')),
    errors);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clear(errors);
    const body = {};
    let where = '';
    switch (to.value) {
      case 'oldest': body.time = '1970-01-01T00:00:00Z'; where = 'the oldest retained message'; break;
      case 'now': body.time = new Date(Date.now() + 86400000).toISOString(); where = 'now'; break; // the server's clock: any later time is its end
      case 'time': {
        const d = new Date(at.value);
        if (Number.isNaN(d.getTime())) { errors.append(errorBox({ message: 'Choose a time.' })); return; }
        body.time = d.toISOString();
        where = d.toLocaleString();
        break;
      }
      default: body.message_id = id.value.trim(); where = `message ${body.message_id}`;
    }
    const skip = to.value === 'now';
    if (!await confirm({
      title: `Seek ${tag} to ${where}?`,
      text: skip ? `Every message now waiting for ${tag} is skipped, and what it has in flight is dropped. Only messages sent from now on reach it.`
        : `${tag}'s messages from ${where} on are delivered to it again; what it has in flight is dropped.`,
      action: 'Seek', expect: skip ? tag : '',
    })) return;
    try {
      const r = await post(`/v1/queues/${enc(queue)}/tags/${enc(tag)}:seek`, body);
      toast(`${tag}: ${num((r.tag.state || {}).available || 0)} available after the seek`);
      done(r.tag);
    } catch (err) { errors.append(errorBox(err)); }
  });
  return h('details', { class: 'panel', id: 'seek' }, h('summary', {}, 'Seek: replay or skip messages'), form);
}
