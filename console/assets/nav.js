// Links within the console: hash routes with URI-encoded names.
import { h } from './dom.js';

export const q = encodeURIComponent;

export function href(path, query) {
  const p = new URLSearchParams(Object.entries(query || {}).filter(([, v]) => v !== '' && v !== undefined && v !== null));
  const qs = p.toString();
  return `#${path}${qs ? `?${qs}` : ''}`;
}

export function go(path, query) { location.hash = href(path, query); }

export const queueHref = (name) => href(`/queue/${q(name)}`);
export const tagHref = (queue, tag) => href(`/queue/${q(queue)}/tag/${q(tag)}`);

// crumbs: the way back to the queues (and to queue, when given).
export function crumbs(queue) {
  return h('div', { class: 'crumbs' }, h('a', { href: href('/queues') }, 'Queues'),
    queue ? [' / ', h('a', { href: queueHref(queue) }, queue)] : null);
}
