// The console's shell: hash routes, sign-in, theme, polling.
import { auth, errorText, forget, hooks, session, whoami } from './api.js';
import { add, clear, errorBox, h } from './dom.js';
import { queuesPage, newQueuePage } from './queues.js';
import { queuePage, tagPage } from './queue.js';
import { peekPage, deadPage } from './messages.js';
import { movesPage } from './moves.js';
import { go } from './nav.js';

const main = document.getElementById('main');

// Routes: #/path/segments?query. Names in segments are URI-encoded.
const routes = [
  [/^\/queues$/, queuesPage, 'queues'],
  [/^\/new-queue$/, newQueuePage, 'new-queue'],
  [/^\/queue\/([^/]+)$/, queuePage, 'queues'],
  [/^\/queue\/([^/]+)\/tag\/([^/]+)$/, tagPage, 'queues'],
  [/^\/queue\/([^/]+)\/peek$/, peekPage, 'queues'],
  [/^\/queue\/([^/]+)\/dead$/, deadPage, 'queues'],
  [/^\/queue\/([^/]+)\/moves$/, movesPage, 'queues'],
];

// The current page's lifetime: polls stop and late answers are dropped
// when the route changes.
let page = null;

// Auto refresh: every page's readings repeat at the interval the header's
// Refresh control sets (kept in localStorage), or not at all when paused.
const REFRESH = 'tagq.refresh';
export const refresh = {
  seconds: (() => { const v = Number(localStorage.getItem(REFRESH) ?? 5); return Number.isFinite(v) && v >= 0 ? v : 5; })(),
};

class Page {
  constructor(params, query) {
    this.params = params;
    this.query = query;
    this.live = true;
    this.tasks = [];
  }

  // every runs fn now and then at the refresh interval (at least floorMs)
  // while the page is shown (and the tab visible); a call still running is
  // not started again.
  // The first run's error is the caller's (the page shows it). A later
  // one marks the page stale until a run succeeds again: a banner says
  // since when tagqd has not answered and how old the numbers shown are,
  // and the numbers are greyed, so nobody reads them as current.
  every(floorMs, fn) {
    const task = { running: false, timer: 0, floorMs };
    task.tick = async (first) => {
      if (!this.live || task.running) return;
      if (!first && document.hidden) { this.schedule(task); return; }
      task.running = true;
      try {
        await fn();
        this.lastOk = new Date();
        this.fresh();
      } catch (e) {
        if (first) throw e;
        if (this.live && e.httpStatus !== 401) this.stale(e);
      } finally {
        task.running = false;
        if (!first) this.schedule(task);
      }
    };
    this.tasks.push(task);
    return task.tick(true).then(() => this.schedule(task));
  }

  schedule(task) {
    clearTimeout(task.timer);
    task.timer = 0;
    if (!this.live || refresh.seconds === 0) return; // paused
    task.timer = setTimeout(() => task.tick(false), Math.max(refresh.seconds * 1000, task.floorMs || 0));
  }

  // retime: the interval changed (or paused, or resumed).
  retime() { this.tasks.forEach((t) => this.schedule(t)); }

  // now: every reading at once (the Refresh now button).
  now() { this.tasks.forEach((t) => { clearTimeout(t.timer); t.tick(false); }); }

  stale(err) {
    const since = this.failingSince || (this.failingSince = new Date());
    main.classList.add('stale');
    let banner = document.getElementById('stale');
    if (!banner) {
      banner = h('div', { id: 'stale', class: 'error stale-banner', role: 'alert' });
      main.prepend(banner);
    }
    const down = err.httpStatus === 0 || err.reason === 'BACKEND_UNAVAILABLE' || err.httpStatus === 503;
    const at = (d) => d.toLocaleTimeString();
    clear(banner).append(
      h('strong', {}, down ? 'tagqd is not answering' : 'Refresh failed'),
      ` since ${at(since)}: ${errorText(err)}. `,
      this.lastOk ? `The numbers shown are from ${at(this.lastOk)}, not current.` : 'Nothing shown is current.',
      refresh.seconds ? ' Retrying.' : ' Auto refresh is paused.');
  }

  fresh() {
    this.failingSince = null;
    main.classList.remove('stale');
    document.getElementById('stale')?.remove();
  }

  stop() { this.live = false; this.tasks.forEach((t) => clearTimeout(t.timer)); this.fresh(); }
}

async function render() {
  if (page) page.stop();
  const raw = location.hash.replace(/^#/, '') || '/queues';
  const [path, qs] = raw.split('?');
  const query = Object.fromEntries(new URLSearchParams(qs || ''));
  if (path === '/signin' || (!session.key && auth.mode !== 'off' && !auth.cert)) {
    if (auth.mode === 'unknown' && !session.key) {
      // Perhaps no key is needed: authentication is off, or the browser
      // sent a client certificate tagqd maps to a principal (mTLS).
      try {
        await whoami();
        auth.cert = auth.mode !== 'off';
      } catch (e) {
        if (e.httpStatus !== 401) { clear(main).append(errorBox(e)); return; }
        // 401: sign in
      }
      if (auth.mode !== 'unknown' && path !== '/signin') return render();
    }
    return signinPage(path === '/signin' ? query.next : raw);
  }
  if (auth.mode === 'unknown') {
    try { await whoami(); } catch (e) {
      if (e.httpStatus === 401) return; // onUnauthenticated went to sign-in
      clear(main).append(errorBox(e));
      return;
    }
  }
  showWho();
  forget();
  let route = null; let m = null;
  for (const r of routes) { m = path.match(r[0]); if (m) { route = r; break; } }
  for (const a of document.querySelectorAll('[data-nav]')) {
    if (route && a.dataset.nav === route[2]) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  clear(main);
  if (!route) {
    main.append(h('h1', { tabindex: '-1' }, 'Not found'), h('p', {}, h('a', { href: '#/queues' }, 'Queues')));
    return;
  }
  page = new Page(m.slice(1).map(decodeURIComponent), query);
  try {
    await route[1](main, page);
  } catch (e) {
    if (page.live) main.append(errorBox(e));
  }
  const h1 = main.querySelector('h1');
  if (h1 && document.activeElement === document.body) { h1.tabIndex = -1; h1.focus({ preventScroll: true }); }
}

function showWho() {
  const who = document.getElementById('who');
  const out = document.getElementById('signout');
  document.querySelector('[data-nav="new-queue"]').hidden = !auth.create;
  if (auth.mode === 'off') { who.textContent = 'authentication off'; out.hidden = true; return; }
  who.textContent = `${auth.cert && !session.key ? 'client certificate' : 'signed in'}${auth.mode === 'admin' ? ': admin' : auth.principal ? `: ${auth.principal}` : ''}`;
  out.hidden = !session.key;
}

function signinPage(next, problem) {
  if (page) page.stop();
  clear(main);
  document.getElementById('who').textContent = '';
  document.getElementById('signout').hidden = true;
  const input = h('input', { type: 'password', id: 'apikey', autocomplete: 'off', required: true, spellcheck: 'false', placeholder: 'tagq_…' });
  const msg = h('div', { 'aria-live': 'polite' });
  if (problem) msg.append(errorBox(problem));
  const form = h('form', { id: 'signin-form' },
    h('label', { for: 'apikey' }, 'API key', input),
    h('p', { class: 'muted' }, 'The key stays in this tab (sessionStorage) and is sent only to this tagqd, as Authorization: Bearer.'),
    h('button', { type: 'submit' }, 'Sign in'), msg);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    session.set(input.value.trim());
    auth.mode = 'unknown';
    clear(msg);
    try {
      await whoami();
    } catch (err) {
      session.clear();
      auth.mode = 'unknown';
      msg.append(errorBox(err));
      return;
    }
    showWho();
    const want = next && next !== '/signin' ? `#${next}` : '#/queues';
    if (location.hash === want) render(); else location.hash = want;
  });
  add(main, h('section', { class: 'signin panel' }, h('h1', {}, 'Sign in to tagq'), form));
  input.focus();
}

// The Refresh control: an interval, or paused; "Refresh now" reads at once.
const refreshSel = document.getElementById('refresh');
for (const o of refreshSel.options) o.selected = Number(o.value) === refresh.seconds;
if (![...refreshSel.options].some((o) => o.selected)) refreshSel.value = '5';
function setRefresh(seconds) {
  if (refresh.seconds) localStorage.setItem(`${REFRESH}.last`, String(refresh.seconds));
  refresh.seconds = seconds;
  refreshSel.value = String(seconds);
  localStorage.setItem(REFRESH, String(seconds));
  document.documentElement.dataset.refresh = seconds ? 'on' : 'paused';
  if (page) page.retime();
}
document.documentElement.dataset.refresh = refresh.seconds ? 'on' : 'paused';
refreshSel.addEventListener('change', () => setRefresh(Number(refreshSel.value)));
document.getElementById('refresh-now').addEventListener('click', () => { if (page) page.now(); });

hooks.onUnauthenticated = (err) => {
  if (document.getElementById('signin-form')) return; // the form shows it
  session.clear();
  auth.mode = 'unknown'; auth.cert = false;
  const raw = location.hash.replace(/^#/, '');
  signinPage(raw.startsWith('/signin') ? '/queues' : raw, err);
};

document.getElementById('signout').addEventListener('click', () => {
  session.clear();
  auth.mode = 'unknown'; auth.cert = false;
  location.hash = '#/signin';
});

// Theme: the system's, until chosen; the choice is kept in localStorage.
const THEME = 'tagq.theme';
function applyTheme(t) {
  const dark = t ? t === 'dark' : matchMedia('(prefers-color-scheme: dark)').matches;
  document.documentElement.dataset.theme = dark ? 'dark' : 'light';
}
applyTheme(localStorage.getItem(THEME));
function toggleTheme() {
  const next = document.documentElement.dataset.theme === 'dark' ? 'light' : 'dark';
  localStorage.setItem(THEME, next);
  applyTheme(next);
}
document.getElementById('theme').addEventListener('click', toggleTheme);

// Keys: "/" finds (the page's search field), "t" switches the theme,
// "p" pauses or resumes auto refresh, "r" refreshes now, "g" then "q" goes
// to the queues, "n" to a new queue. Not while typing.
let pendingG = false;
document.addEventListener('keydown', (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const t = e.target;
  if (t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement || document.querySelector('dialog[open]')) return;
  if (e.key === '/') {
    const f = main.querySelector('[data-search]');
    if (f) { e.preventDefault(); f.focus(); }
  } else if (e.key === 't') toggleTheme();
  else if (e.key === 'p') setRefresh(refresh.seconds ? 0 : (Number(localStorage.getItem(`${REFRESH}.last`)) || 5));
  else if (e.key === 'r' && page) page.now();
  else if (pendingG && e.key === 'q') go('/queues');
  else if (e.key === 'n' && auth.create) go('/new-queue');
  pendingG = e.key === 'g';
});

window.addEventListener('hashchange', render);
render();
