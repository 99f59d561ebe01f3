// The REST API, as any client calls it: JSON bodies with
// Content-Type: application/json (the API's CSRF rule), the API key as
// Authorization: Bearer, no cookies.

const KEY = 'tagq.apiKey';

// The API key lives in sessionStorage: per tab, gone when it closes, never
// in a URL or a cookie.
export const session = {
  get key() { return sessionStorage.getItem(KEY) || ''; },
  set(key) { sessionStorage.setItem(KEY, key); },
  clear() { sessionStorage.removeItem(KEY); },
};

// ApiError is a failed call: the HTTP status, the gRPC code, and the
// ErrorInfo's reason and metadata when the answer has one.
export class ApiError extends Error {
  constructor(httpStatus, body) {
    super((body && body.message) || `HTTP ${httpStatus}`);
    this.httpStatus = httpStatus;
    this.code = body && body.code;
    const info = ((body && body.details) || []).find((d) => String(d['@type'] || '').endsWith('google.rpc.ErrorInfo'));
    this.reason = info ? info.reason : '';
    this.metadata = (info && info.metadata) || {};
  }
}

export const enc = encodeURIComponent;

// onUnauthenticated is called when a call answers 401 (set by the app).
export const hooks = { onUnauthenticated: () => {} };

export async function call(method, path, body) {
  const headers = { Accept: 'application/json' };
  const key = session.key;
  if (key) headers.Authorization = `Bearer ${key}`;
  const init = { method, headers, credentials: 'omit', cache: 'no-store' };
  if (body !== undefined || method === 'POST' || method === 'PATCH') {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body === undefined ? {} : body);
  }
  let resp;
  try {
    resp = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, { message: `tagqd did not answer: ${e.message}` });
  }
  const text = await resp.text();
  let data = {};
  if (text) {
    try { data = JSON.parse(text); } catch { data = { message: text.slice(0, 300) }; }
  }
  if (!resp.ok) {
    const err = new ApiError(resp.status, data);
    if (resp.status === 401) hooks.onUnauthenticated(err);
    throw err;
  }
  return data;
}

export const get = (path) => call('GET', path);
export const post = (path, body) => call('POST', path, body);

// --- who is signed in, and what they may do ---

// auth.mode: 'off' (tagqd without --auth: everything allowed), 'admin',
// or 'user' (per-queue permission levels). auth.principal: the name,
// when known (GetPermission names the caller).
// auth.cert: signed in by a client certificate, without a key.
export const auth = { mode: 'unknown', principal: '', cert: false };
let levels = null; // permission level -> actions it allows (levels.json)
let perms = new Map(); // queue -> Promise of GetPermission's answer

// whoami asks GetPermission (one's own level needs no permission) on a
// name no queue needs to have: source "admin" means an admin;
// AUTH_DISABLED means authentication is off. Throws on 401.
export async function whoami() {
  if (!levels) levels = await (await fetch('levels.json', { cache: 'no-store' })).json();
  auth.principal = '';
  try {
    const r = await get('/v1/permissions:query?queue=console-probe');
    auth.mode = r.source === 'admin' ? 'admin' : 'user';
    auth.principal = r.principal || '';
  } catch (e) {
    if (e.reason !== 'AUTH_DISABLED') throw e;
    auth.mode = 'off';
  }
  forget();
  return auth;
}

// forget drops the permissions read so far (each page reads them afresh).
export function forget() { perms = new Map(); }

// permission is the caller's level on queue ({permission, tags, source}).
export function permission(queue) {
  if (auth.mode !== 'user') return Promise.resolve({ permission: 'PERMISSION_FULL_CONTROL', tags: [], source: auth.mode });
  let p = perms.get(queue);
  if (!p) {
    p = get(`/v1/permissions:query?queue=${enc(queue)}`).catch(() => ({ permission: 'PERMISSION_NONE', tags: [] }));
    perms.set(queue, p);
  }
  return p;
}

// may answers whether the caller's level on queue allows action: one of
// send, receive, handle, info, peek, admin, grant (as levels.json names them).
export async function may(queue, action) {
  if (auth.mode !== 'user') return true;
  const r = await permission(queue);
  return (levels[r.permission] || []).includes(action);
}

// mayAll answers may() for several actions at once: {action: bool}.
export async function mayAll(queue, actions) {
  const out = {};
  await Promise.all(actions.map(async (a) => { out[a] = await may(queue, a); }));
  return out;
}
