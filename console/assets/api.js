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
// tagqd's messages begin with the reason ("QUEUE_NOT_FOUND: queue …");
// the message kept here is without it, so showing reason and message
// names the reason once.
export class ApiError extends Error {
  constructor(httpStatus, body) {
    const info = ((body && body.details) || []).find((d) => String(d['@type'] || '').endsWith('google.rpc.ErrorInfo'));
    const reason = info ? info.reason : '';
    let message = (body && body.message) || `HTTP ${httpStatus}`;
    if (reason && message.startsWith(`${reason}: `)) message = message.slice(reason.length + 2);
    super(message);
    this.httpStatus = httpStatus;
    this.code = body && body.code;
    this.reason = reason;
    this.metadata = (info && info.metadata) || {};
  }

  // text: "REASON: message", for a toast.
  get text() { return this.reason ? `${this.reason}: ${this.message}` : this.message; }
}

// errorText is how a toast names any error.
export const errorText = (e) => (e && e.text) || (e && e.message) || String(e);

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
    throw new ApiError(0, { message: `no answer (${e.message})` });
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
// auth.create: may create some queue (ADMIN_QUEUE on a name or prefix).
export const auth = { mode: 'unknown', principal: '', cert: false, create: true };
let levels = null; // permission level -> actions it allows (levels.json)
let perms = new Map(); // queue -> Promise of GetPermission's answer

const json = async (path) => (await fetch(path, { cache: 'no-store', credentials: 'omit' })).json();

// whoami reads session.json (is authentication on; did this request bring
// a client certificate): with authentication off, or with neither a key
// nor a certificate, it calls no API (a refused probe would log an error
// in the browser on every page load). Otherwise it asks GetPermission
// (one's own level needs no permission) on a name no queue needs to have:
// source "admin" means an admin. Throws a 401 ApiError when a key is needed.
export async function whoami() {
  if (!levels) levels = await json('levels.json');
  const s = await json('session.json');
  auth.principal = '';
  auth.create = true;
  forget();
  if (!s.authentication) {
    auth.mode = 'off';
    return auth;
  }
  if (!session.key && !s.client_certificate) {
    throw new ApiError(401, { message: 'sign in with an API key', details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'UNAUTHENTICATED' }] });
  }
  const r = await get('/v1/permissions:query?queue=console-probe');
  auth.mode = r.source === 'admin' ? 'admin' : 'user';
  auth.principal = r.principal || '';
  if (auth.mode === 'user') {
    // Creating a queue needs ADMIN_QUEUE on its name: offer "New queue"
    // only to a principal holding that somewhere.
    const g = auth.principal ? await get(`/v1/permissions?principal=${enc(auth.principal)}`).catch(() => ({})) : {};
    auth.create = (g.grants || []).some((x) => (levels[x.permission] || []).includes('admin'));
  }
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
