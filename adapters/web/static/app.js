// shellgate's web page: the terminal list, one live terminal (xterm.js), and
// the agent sessions panel. It speaks AHP over the host's own WebSocket
// endpoint and the agent gate's REST API, like any other client.
//
// Sign-in: the token arrives in the URL fragment (#token=…), which browsers
// never send to a server; it is moved to sessionStorage (this tab only) and
// removed from the address bar. It leaves the page only as the WebSocket
// URL's ?token= (the door browsers can use, since they cannot set headers on
// a WebSocket) and as the REST API's Authorization header.

import { Terminal } from './vendor/xterm/xterm.mjs';
import { FitAddon } from './vendor/addon-fit/addon-fit.mjs';
import { AhpClient, ROOT, Codes } from './ahp.js';
import { AgentPanel } from './agents.js';
import { el, clear } from './dom.js';

const KEYS = Object.freeze({
  token: 'shellgate.token',
  clientId: 'shellgate.clientId',
  clientSeq: 'shellgate.clientSeq',
});
// Kept per browser (localStorage), not per tab: how a person likes the page
// laid out is not a secret and should survive a new tab.
const LAYOUT_KEYS = Object.freeze({
  terminals: 'shellgate.collapsed.terminals',
  agents: 'shellgate.collapsed.agents',
});
const GRANTS_KEY = 'shellgate/grants';
const VERSIONS = ['1.0.0', '0.9.0'];
const SPAWN_KEY = 'shellgate/spawn';
const PAGE_VERSION = '1';

allowLibraryStyles();
recordPolicyViolations();

const $ = (id) => document.getElementById(id);
const ui = {
  conn: $('conn'),
  who: $('who'),
  signOut: $('sign-out'),
  signin: $('signin'),
  signinForm: $('signin-form'),
  tokenInput: $('token-input'),
  workspace: $('workspace'),
  newTerminal: $('new-terminal'),
  listBanner: $('list-banner'),
  list: $('terminal-list'),
  listEmpty: $('list-empty'),
  title: $('term-title'),
  status: $('term-status'),
  claim: $('term-claim'),
  close: $('close-terminal'),
  readonly: $('readonly'),
  note: $('note'),
  screen: $('screen'),
  placeholder: $('placeholder'),
  placeholderText: $('placeholder-text'),
  agentList: $('agent-sessions'),
  agentEmpty: $('agents-empty'),
  agentError: $('agents-error'),
  agentNote: $('agents-note'),
  pendingCount: $('pending-count'),
  notify: $('notify'),
  toast: $('toast'),
  signinReason: $('signin-reason'),
  sidebar: $('sidebar'),
  agentPanel: $('agent-panel'),
  collapseTerminals: $('collapse-terminals'),
  collapseAgents: $('collapse-agents'),
};

// xterm.js's DOM renderer adds <style> elements at run time. The policy
// admits only styles from this origin and elements carrying the index
// document's nonce, so each new <style> is stamped with it at creation,
// before it is inserted (a nonce added later does not count).
function allowLibraryStyles() {
  const nonce = document.getElementById('app-css')?.nonce;
  if (!nonce) return;
  const create = Document.prototype.createElement;
  document.createElement = function createElement(tag, options) {
    const node = create.call(this, tag, options);
    if (String(tag).toLowerCase() === 'style') node.setAttribute('nonce', nonce);
    return node;
  };
}

// Policy violations are kept where a test (or a curious person) can read
// them: window.shellgateViolations.
function recordPolicyViolations() {
  window.shellgateViolations = [];
  document.addEventListener('securitypolicyviolation', (e) => {
    window.shellgateViolations.push(`${e.violatedDirective}: ${e.blockedURI || 'inline'}`);
    console.warn('shellgate: content security policy blocked', e.violatedDirective, e.blockedURI);
  });
}

// ---- sign-in -------------------------------------------------------------

function token() {
  return sessionStorage.getItem(KEYS.token) || '';
}

function setToken(t) {
  if (t !== token()) {
    // Another person's token: this tab's client id must not carry over.
    sessionStorage.removeItem(KEYS.clientId);
    sessionStorage.removeItem(KEYS.clientSeq);
  }
  sessionStorage.setItem(KEYS.token, t);
}

// takeTokenFromFragment moves #token=… into sessionStorage and out of the
// address bar (and so out of history, bookmarks and screenshots).
function takeTokenFromFragment() {
  const hash = location.hash.replace(/^#/, '');
  if (!hash) return false;
  const params = new URLSearchParams(hash);
  if (!params.has('token')) return false;
  const t = params.get('token').trim();
  params.delete('token');
  const rest = params.toString();
  history.replaceState(history.state, '', location.pathname + location.search + (rest ? `#${rest}` : ''));
  if (!t) return false;
  setToken(t);
  return true;
}

function signOut() {
  for (const k of Object.values(KEYS)) sessionStorage.removeItem(k);
  location.replace(location.pathname);
}

// forgetToken drops a token the host no longer accepts, so a reload shows
// the sign-in form instead of trying it again.
function forgetToken() {
  for (const k of Object.values(KEYS)) sessionStorage.removeItem(k);
}

// clientId is random and kept in sessionStorage; it is reused when this tab
// reloads, and a new tab (a duplicated one included, which copies the
// storage) mints its own, so two tabs never share one client id and its
// clientSeq counter.
function clientIdentity() {
  const nav = performance.getEntriesByType('navigation')[0];
  let id = sessionStorage.getItem(KEYS.clientId);
  if (!id || !nav || nav.type !== 'reload') {
    id = `web-${uuid()}`;
    sessionStorage.setItem(KEYS.clientId, id);
    sessionStorage.setItem(KEYS.clientSeq, '0');
  }
  return id;
}

// nextClientSeq survives reloads: the host applies a (clientId, clientSeq)
// at most once, so numbers must keep increasing for the same client id.
function nextClientSeq() {
  const n = (Number.parseInt(sessionStorage.getItem(KEYS.clientSeq) || '0', 10) || 0) + 1;
  sessionStorage.setItem(KEYS.clientSeq, String(n));
  return n;
}

// uuid works outside secure contexts too (crypto.randomUUID does not).
function uuid() {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

function socketURL(t) {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}/?token=${encodeURIComponent(t)}`;
}

// ---- small view helpers ---------------------------------------------------

let toastTimer = 0;
function toast(text, kind = 'error') {
  ui.toast.textContent = text;
  ui.toast.className = `toast ${kind === 'info' ? 'info' : ''}`.trim();
  ui.toast.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { ui.toast.hidden = true; }, 7000);
}

function show(node, text) {
  node.textContent = text || '';
  node.hidden = !text;
}

function lifecycleOf(t) {
  if (t.lifecycle && t.lifecycle.status) return t.lifecycle;
  if (t.exitCode !== undefined) return { status: 'exited', exitCode: t.exitCode }; // before 0.9.0
  return { status: 'running' };
}

function statusText(lc) {
  if (lc.status === 'running') return 'running';
  if (lc.status === 'exited') return lc.exitCode === undefined ? 'exited' : `exited (code ${lc.exitCode})`;
  return String(lc.status);
}

function statusClass(lc) {
  if (lc.status === 'running') return 'badge running';
  return lc.exitCode ? 'badge exited failed' : 'badge exited';
}

function contentText(content) {
  let out = '';
  for (const part of content || []) {
    if (part.type === 'unclassified') out += part.value || '';
    else if (part.type === 'command') out += part.output || '';
  }
  return out;
}

// screenOf is the snapshot's current screen as a VT byte stream, when the
// host keeps a screen model of the terminal (pty terminals).
function screenOf(state) {
  const screen = state?._meta?.['shellgate/screen'];
  return typeof screen === 'string' ? screen : '';
}

// snapshotText is what draws a terminal's snapshot: its scrollback (the
// host has taken the terminal queries out of it), then, when there is one,
// the current screen over it, so that a program that is still open (vim,
// htop) shows as it is now. Leaving the alternate screen first puts the
// scrollback's tail on the main screen, where the screen's own drawing
// starts.
function snapshotText(state) {
  const screen = screenOf(state);
  const history = contentText(state.content);
  return screen ? history + '\x1b[?1049l' + screen : history;
}

function isRefusal(err) {
  return err && (err.code === Codes.PermissionDenied || err.code === Codes.AuthRequired);
}

// ---- the app ---------------------------------------------------------------

class App {
  constructor(tok) {
    this.token = tok;
    this.clientId = clientIdentity();
    this.principal = '';
    // What the host says this person may do (shellgate/grants in
    // initialize's _meta): a Set of operations, or null from a host that
    // does not say, where the page learns from refusals instead.
    this.grants = null;
    this.pending = 0; // approvals waiting, for the tab's title
    this.expanded = new Set(); // agent sessions whose terminals the list shows
    this.showExited = new Set(); // agent sessions whose ended terminals it shows too
    this.terminals = [];
    this.open = null; // the terminal on screen, see openTerminal
    this.canCreate = true;
    // What the host refused this person, by what it would have done: the
    // host's reason, shown in the list's banner. Grants are not per
    // terminal, so one refusal stands for all of them.
    this.refusals = { create: '', dispose: '' };
    this.term = null;
    this.fit = null;
    this.following = false;
    this.resizeTimer = 0;
    this.client = new AhpClient({
      url: socketURL(tok),
      clientId: this.clientId,
      versions: VERSIONS,
      clientInfo: { name: 'shellgate-web', version: PAGE_VERSION, title: 'shellgate web page' },
      nextClientSeq,
      callbacks: {
        onStatus: (s) => this.onStatus(s),
        onSync: (s) => this.onSync(s),
        onAction: (e, replayed) => this.onAction(e, replayed),
        onMissing: (uris) => this.onMissing(uris),
        onNotification: (m, p) => this.onNotification(m, p),
        onClosed: (c) => this.onClosed(c),
      },
    });
    this.agents = new AgentPanel({
      list: ui.agentList,
      empty: ui.agentEmpty,
      error: ui.agentError,
      note: ui.agentNote,
      count: ui.pendingCount,
      token: () => this.token,
      userId: () => this.principal,
      onUnauthorized: () => this.checkToken(),
      onChange: (c) => this.agentsChanged(c),
    });
  }

  start() {
    ui.signin.hidden = true;
    ui.workspace.hidden = false;
    ui.signOut.hidden = false;
    ui.newTerminal.addEventListener('click', () => this.createTerminal());
    ui.close.addEventListener('click', () => this.armClose(ui.close, this.open?.uri));
    ui.collapseTerminals.addEventListener('click', () => this.toggleCollapsed('terminals'));
    ui.collapseAgents.addEventListener('click', () => this.toggleCollapsed('agents'));
    this.applyLayout();
    this.offerNotifications();
    this.renderList();
    this.client.start();
    this.agents.start();
  }

  // -- connection --

  onStatus({ state, detail, retryInMs }) {
    ui.conn.dataset.state = state;
    ui.conn.title = detail || '';
    const text = {
      connecting: 'connecting…',
      connected: 'connected',
      reconnecting: retryInMs ? `reconnecting in ${Math.ceil(retryInMs / 1000)}s` : 'reconnecting…',
      failed: 'disconnected',
    }[state] || state;
    ui.conn.textContent = text;
    if (state === 'failed') toast(detail);
    if (state === 'reconnecting' && retryInMs && !this.client.handshaken && this.client.attempt >= 2) {
      toast(`Cannot connect: ${detail}`);
    }
    ui.newTerminal.disabled = state !== 'connected' || !this.canCreate;
    this.renderHead();
  }

  onSync({ snapshots, meta }) {
    this.noteGrants(meta);
    const root = snapshots.find((s) => s.resource === ROOT);
    if (root) {
      this.notePrincipal(root.state?._meta);
      this.setTerminals(root.state?.terminals || []);
    }
    const o = this.open;
    if (!o || o.gone) return;
    const snap = snapshots.find((s) => s.resource === o.uri);
    if (snap) {
      this.applySnapshot(o, snap);
    } else {
      this.subscribeOpen(o);
    }
  }

  onMissing(uris) {
    if (this.open && uris.includes(this.open.uri)) this.markGone(this.open, 'This terminal was closed while the page was disconnected.');
  }

  onNotification(method, params) {
    if (method === 'auth/required') {
      const why = params.reason === 'expired' ? 'Your sign-in expired' : 'This host asks you to sign in again';
      toast(`${why}. Sign out and open a fresh sign-in link.`);
    }
  }

  // onClosed hears why the socket closed. A token the host has revoked
  // (1008 with the reason) or refuses at the door is not retried for ever:
  // the page returns to the sign-in form and says why. A socket that never
  // opened may be a refused token or a host that is down; the REST API's
  // answer to the same token tells them apart.
  onClosed({ opened, code, reason }) {
    if (opened && code === 1008 && /revoked/i.test(reason)) {
      this.signedOutByHost(`The host ended your sign-in: ${reason}.`);
      return true;
    }
    if (!opened) this.checkToken();
    return false;
  }

  async checkToken() {
    if (this.checking) return;
    this.checking = true;
    try {
      const resp = await fetch('/api/agent-terminal/sessions', {
        headers: { Authorization: `Bearer ${this.token}` }, cache: 'no-store', credentials: 'omit', redirect: 'error',
      });
      if (resp.status === 401) {
        this.signedOutByHost('The host does not accept this token: it was rotated or removed, or it is mistyped. Sign in with a current one (shellgate url prints a fresh link).');
      }
    } catch {
      // The host is not reachable: the connection keeps retrying.
    } finally {
      this.checking = false;
    }
  }

  signedOutByHost(reason) {
    this.client.stop();
    this.agents.stop();
    forgetToken();
    showSignIn(reason);
  }

  // noteGrants takes what the host says this person may do; the page then
  // offers only that (no button it would refuse, banners in plain words).
  noteGrants(meta) {
    const g = meta?.[GRANTS_KEY];
    if (!g || !Array.isArray(g.operations)) return;
    this.grants = new Set(g.operations.map(String));
    if (typeof g.principal === 'string' && g.principal) {
      this.principal = g.principal;
      show(ui.who, `signed in as ${this.principal}`);
    }
    this.canCreate = this.may('terminal:create');
    ui.newTerminal.hidden = !this.canCreate;
    this.agents.setGrants(this.grants);
    show(ui.listBanner, this.roleText());
    this.renderList();
    this.renderHead();
  }

  // may says whether this person may do op: as the host said, or, from a
  // host that does not say, yes until it refuses.
  may(op) {
    return !this.grants || this.grants.has(op);
  }

  // roleText says in plain words what this person's role leaves out of the
  // terminals, or '' when nothing.
  roleText() {
    if (!this.grants) return '';
    if (!this.may('terminal:output')) {
      return 'Your role shows which terminals there are, but not what runs in them.';
    }
    const cannot = [];
    if (!this.may('terminal:input')) cannot.push('type into them');
    if (!this.may('terminal:create')) cannot.push('open new ones');
    if (!this.may('terminal:dispose')) cannot.push('close them');
    if (!cannot.length) return '';
    const list = cannot.length === 1 ? cannot[0] : `${cannot.slice(0, -1).join(', ')} or ${cannot.at(-1)}`;
    return `You can watch every terminal here; your role does not let you ${list}.`;
  }

  // -- layout --

  toggleCollapsed(panel) {
    const key = LAYOUT_KEYS[panel];
    if (localStorage.getItem(key) === '1') localStorage.removeItem(key);
    else localStorage.setItem(key, '1');
    this.applyLayout();
  }

  applyLayout() {
    const left = localStorage.getItem(LAYOUT_KEYS.terminals) === '1';
    const right = localStorage.getItem(LAYOUT_KEYS.agents) === '1';
    ui.workspace.classList.toggle('left-collapsed', left);
    ui.workspace.classList.toggle('right-collapsed', right);
    ui.sidebar.classList.toggle('collapsed', left);
    ui.agentPanel.classList.toggle('collapsed', right);
    ui.collapseTerminals.textContent = left ? '»' : '«';
    ui.collapseTerminals.setAttribute('aria-expanded', String(!left));
    ui.collapseTerminals.title = left ? 'Show the terminal list' : 'Hide the terminal list';
    ui.collapseAgents.textContent = right ? '«' : '»';
    ui.collapseAgents.setAttribute('aria-expanded', String(!right));
    ui.collapseAgents.title = right ? 'Show the agent sessions' : 'Hide the agent sessions';
  }

  // agentsChanged hears from the agent panel: whether it has anything to
  // show (it takes no width when not), how many approvals wait (the tab's
  // title says so) and which ones are new (a notification, if allowed).
  agentsChanged({ shown, pending, fresh }) {
    ui.workspace.classList.toggle('no-agents', !shown);
    this.pending = pending;
    this.sessionsById = new Map(this.agents.sessions.map((x) => [String(x.session_id), x]));
    this.renderTitle();
    // The list names each session's agent; rebuilt only when those change,
    // so a poll does not throw away a close button's "Click again".
    const names = JSON.stringify([...this.sessionsById].map(([id, x]) => [id, x.agent_id]));
    if (names !== this.agentNames) {
      this.agentNames = names;
      this.renderList();
    }
    for (const f of fresh) this.notifyApproval(f);
  }

  offerNotifications() {
    if (!('Notification' in window) || Notification.permission !== 'default') return;
    ui.notify.hidden = false;
    ui.notify.addEventListener('click', async () => {
      try {
        await Notification.requestPermission();
      } finally {
        ui.notify.hidden = Notification.permission === 'default';
      }
    });
  }

  notifyApproval({ agent, command }) {
    if (!('Notification' in window) || Notification.permission !== 'granted') return;
    try {
      new Notification(`shellgate: ${agent} waits for approval`, { body: command, tag: 'shellgate-approval' });
    } catch {
      // Some browsers only notify from a service worker; the title still counts.
    }
  }

  renderTitle() {
    const o = this.open;
    const base = o ? `${o.title} — shellgate` : 'shellgate';
    document.title = this.pending ? `(${this.pending}) ${base}` : base;
  }

  notePrincipal(meta) {
    if (!meta || typeof meta !== 'object') return;
    for (const [k, v] of Object.entries(meta)) {
      if (/principal/i.test(k) && typeof v === 'string' && v) {
        this.principal = v.replace(/^user:/, '');
        show(ui.who, `signed in as ${this.principal}`);
      }
    }
  }

  // -- the root list --

  setTerminals(list) {
    this.terminals = Array.isArray(list) ? list : [];
    const o = this.open;
    const listed = o && this.terminals.some((t) => t.resource === o.uri);
    if (o && !o.gone && !listed && this.client.connected && (o.subscribed || !o.watchable)) {
      this.markGone(o, 'This terminal was closed.');
    }
    if (o) {
      const info = this.terminals.find((t) => t.resource === o.uri);
      if (info) {
        o.title = info.title ?? o.title;
        o.claim = info.claim ?? o.claim;
        o.lifecycle = lifecycleOf(info);
        this.renderHead();
      }
    }
    this.renderList();
  }

  renderList() {
    // Rebuilding the list must not throw a keyboard user's focus away.
    const active = document.activeElement;
    const refocus = active && ui.list.contains(active)
      ? { uri: active.closest('[data-uri]')?.dataset.uri, testid: active.dataset.testid }
      : null;
    clear(ui.list);
    // People's terminals first; each agent session's command terminals
    // under one collapsed row, so a busy agent does not bury them.
    const groups = new Map();
    for (const t of this.terminals) {
      const session = t.claim?.kind === 'session' ? String(t.claim.session || '') : '';
      if (!session) {
        ui.list.append(this.row(t));
        continue;
      }
      if (!groups.has(session)) groups.set(session, []);
      groups.get(session).push(t);
    }
    for (const [session, list] of groups) ui.list.append(this.group(session, list));
    ui.listEmpty.hidden = this.terminals.length > 0;
    if (refocus && refocus.uri && refocus.testid) {
      ui.list.querySelector(`[data-uri="${CSS.escape(refocus.uri)}"] [data-testid="${CSS.escape(refocus.testid)}"]`)?.focus();
    }
  }

  row(t) {
    const lc = lifecycleOf(t);
    const current = this.open && this.open.uri === t.resource;
    const title = t.title || t.resource;
    const openBtn = el('button', {
      class: 'row-open', type: 'button', 'data-testid': 'terminal-open', 'aria-label': `Open terminal ${title}`,
    }, title);
    openBtn.addEventListener('click', () => this.openTerminal(t.resource));
    let closeBtn = null;
    if (this.may('terminal:dispose')) {
      closeBtn = el('button', {
        class: 'btn danger small', type: 'button', 'data-testid': 'terminal-close', 'aria-label': `Close terminal ${title}`,
      }, 'Close');
      closeBtn.addEventListener('click', () => this.armClose(closeBtn, t.resource));
      this.closable(closeBtn);
    }
    return el('li', {
      class: 'terminal-row', 'data-testid': 'terminal-row', 'data-uri': t.resource,
      'data-status': lc.status, 'aria-current': current ? 'true' : 'false',
    },
    openBtn,
    el('span', { class: statusClass(lc), 'data-testid': 'terminal-row-status' }, statusText(lc)),
    el('div', { class: 'meta', title: t.resource }, `${this.claimText(t.claim)} · ${hostOf(t)} · ${t.resource}`),
    closeBtn);
  }

  // group is one agent session's terminals: a row that says how many and
  // how many run, opened on a click; ended ones stay behind a count.
  group(session, list) {
    const id = session.replace(/^ahp-session:\/?/, '');
    const info = this.sessionsById?.get(id);
    const running = list.filter((t) => lifecycleOf(t).status === 'running');
    const ended = list.length - running.length;
    const open = this.expanded.has(session) || list.some((t) => this.open?.uri === t.resource);
    const label = `${info?.agent_id ? `agent ${info.agent_id}` : 'agent session'} · ${list.length} command${list.length === 1 ? '' : 's'}${running.length ? `, ${running.length} running` : ''}`;
    const toggle = el('button', {
      class: 'group-toggle', type: 'button', 'data-testid': 'agent-group-toggle', 'aria-expanded': String(open), title: session,
    }, `${open ? '▾' : '▸'} ${label}`);
    toggle.addEventListener('click', () => {
      if (this.expanded.has(session)) this.expanded.delete(session);
      else this.expanded.add(session);
      this.renderList();
    });
    const li = el('li', { class: 'terminal-group', 'data-testid': 'agent-group', 'data-session': session }, toggle);
    if (!open) return li;
    const showEnded = this.showExited.has(session);
    const rows = el('ul', { class: 'terminal-list nested' });
    for (const t of list) {
      if (showEnded || lifecycleOf(t).status === 'running' || this.open?.uri === t.resource) rows.append(this.row(t));
    }
    li.append(rows);
    if (ended && !showEnded) {
      const more = el('button', { class: 'btn ghost small', type: 'button', 'data-testid': 'agent-group-exited' },
        `${ended} ended — show`);
      more.addEventListener('click', () => {
        this.showExited.add(session);
        this.renderList();
      });
      li.append(more);
    }
    return li;
  }

  claimText(claim) {
    if (!claim) return 'unclaimed';
    if (claim.kind === 'client') return claim.clientId === this.clientId ? 'you (this tab)' : `client ${claim.clientId}`;
    if (claim.kind === 'session') {
      const info = this.sessionsById?.get(String(claim.session || '').replace(/^ahp-session:\/?/, ''));
      return info?.agent_id ? `agent ${info.agent_id}` : `agent session ${claim.session}`;
    }
    return String(claim.kind);
  }

  // armClose asks for a second click before disposing: closing ends the
  // process for everyone watching.
  armClose(button, uri) {
    if (!uri || this.refusals.dispose) return;
    const label = button === ui.close ? 'Close terminal' : 'Close';
    if (button.dataset.armed === uri) {
      // Back to its own label at once: the terminal is being closed, and a
      // button left saying "Click again" would offer to close the next one.
      delete button.dataset.armed;
      button.textContent = label;
      this.disposeTerminal(uri);
      return;
    }
    button.dataset.armed = uri;
    button.textContent = 'Click again to close';
    setTimeout(() => {
      if (button.dataset.armed === uri) {
        delete button.dataset.armed;
        button.textContent = label;
      }
    }, 4000);
  }

  async createTerminal() {
    const uri = `ahp-terminal:/${uuid()}`;
    const size = this.proposedSize();
    try {
      await this.client.request('createTerminal', {
        channel: uri,
        cols: size.cols,
        rows: size.rows,
        _meta: { [SPAWN_KEY]: { pty: true } },
      });
    } catch (err) {
      if (isRefusal(err)) {
        this.canCreate = false;
        ui.newTerminal.disabled = true;
        ui.newTerminal.title = err.message;
        this.refused('create', err.message);
      } else {
        toast(`Could not open a terminal: ${err.message}`);
      }
      return;
    }
    await this.openTerminal(uri);
  }

  async disposeTerminal(uri) {
    try {
      await this.client.request('disposeTerminal', { channel: uri });
    } catch (err) {
      if (isRefusal(err)) this.refused('dispose', err.message);
      else toast(`Could not close the terminal: ${err.message}`);
    }
  }

  // refused notes what the host refused (create or dispose): the list's
  // banner says so, and the buttons for it are disabled with the reason.
  refused(what, reason) {
    this.refusals[what] = reason;
    const r = this.refusals;
    const lines = [];
    if (r.create) lines.push(`${r.create}. You cannot open terminals here.`);
    if (r.dispose) lines.push(`${r.dispose}. You cannot close terminals here.`);
    show(ui.listBanner, lines.length ? `Read-only: ${lines.join(' ')}` : '');
    this.renderList();
    this.renderHead();
  }

  // closable sets a close button's state: disabled, with the reason, once
  // the host refused this person closing terminals.
  closable(button) {
    const reason = this.refusals.dispose;
    button.disabled = Boolean(reason);
    if (reason) {
      button.title = reason;
      delete button.dataset.armed;
      button.textContent = button === ui.close ? 'Close terminal' : 'Close';
    } else {
      button.removeAttribute('title');
    }
  }

  // -- the open terminal --

  // showScreen shows the terminal, or the placeholder with text instead.
  showScreen(on, text) {
    ui.screen.hidden = !on;
    ui.placeholder.hidden = on;
    if (text) ui.placeholderText.textContent = text;
  }

  ensureTerm() {
    if (this.term) return;
    this.term = new Terminal({
      cursorBlink: true,
      fontFamily: 'ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace',
      fontSize: 13,
      scrollback: 10000,
      theme: {
        background: '#0a0d12',
        foreground: '#e6edf3',
        cursor: '#5eead4',
        selectionBackground: '#264f78',
      },
    });
    this.fit = new FitAddon();
    this.term.loadAddon(this.fit);
    this.term.open(ui.screen);
    this.replaying = 0; // writes of a snapshot or a replay not yet parsed
    // While xterm.js parses a snapshot or a replay, what it "types" is its
    // answers to the queries in there (device attributes, cursor position,
    // colours…): no person typed them, and they must not reach the shell.
    this.term.onData((data) => {
      if (this.replaying === 0) this.type(data);
    });
    this.term.onResize(({ cols, rows }) => this.sizeChanged(cols, rows));
    new ResizeObserver(() => this.layout()).observe(ui.screen);
  }

  proposedSize() {
    const d = this.fit?.proposeDimensions();
    return d && d.cols > 0 && d.rows > 0 ? { cols: d.cols, rows: d.rows } : { cols: 100, rows: 30 };
  }

  async openTerminal(uri) {
    if (this.open && this.open.uri === uri && !this.open.gone) {
      this.term?.focus();
      return;
    }
    if (this.open && this.open.subscribed) this.client.unsubscribe(this.open.uri);
    const info = this.terminals.find((t) => t.resource === uri) || {};
    const o = {
      uri,
      title: info.title || uri,
      claim: info.claim,
      lifecycle: lifecycleOf(info),
      fromSeq: Number.MAX_SAFE_INTEGER, // nothing applies before the snapshot
      cols: 0, // the size the host last confirmed
      rows: 0,
      sent: '', // the size this page last asked for, "COLSxROWS"
      probe: 0, // clientSeq of the empty input that asks whether this person may type; 0 once answered
      isPty: true,
      canType: this.may('terminal:input'),
      canResize: this.may('terminal:resize'),
      watchable: this.may('terminal:output'),
      subscribed: false,
      gone: false,
      readOnly: '',
      note: '',
    };
    this.open = o;
    this.showScreen(true);
    this.ensureTerm();
    this.term.reset();
    ui.screen.classList.remove('readonly');
    this.renderHead();
    this.renderList();
    if (!o.watchable) {
      this.setReadOnly(o, 'your role shows this terminal in the list, but not its screen');
      this.showScreen(false, 'Your role does not let you watch terminals.');
      return;
    }
    if (!o.canType) this.setReadOnly(o, 'you can watch this terminal, but not type into it');
    await this.subscribeOpen(o);
  }

  async subscribeOpen(o) {
    let snap;
    try {
      snap = await this.client.subscribe(o.uri);
    } catch (err) {
      if (this.open !== o) return;
      if (isRefusal(err)) {
        o.watchable = false;
        this.setReadOnly(o, `${err.message}. You can see this terminal in the list, but not its screen`);
        this.showScreen(false, 'Your grants do not let you watch this terminal.');
      } else if (err.code === Codes.NotFound) {
        this.markGone(o, 'This terminal no longer exists.');
      } else if (err.code !== Codes.ConnectionLost) {
        toast(`Could not open the terminal: ${err.message}`);
      }
      return; // a lost connection re-subscribes on reconnect
    }
    if (this.open !== o) {
      this.client.unsubscribe(o.uri);
      return;
    }
    this.applySnapshot(o, snap);
  }

  applySnapshot(o, snap) {
    const s = snap?.state || {};
    o.subscribed = true;
    o.fromSeq = Number.isSafeInteger(snap?.fromSeq) ? snap.fromSeq : 0;
    o.title = s.title || o.title;
    o.claim = s.claim || o.claim;
    o.lifecycle = lifecycleOf(s);
    this.hostSize(o, s.cols || 0, s.rows || 0);
    o.sent = ''; // the snapshot says what size the host has; ask again if it differs
    o.isPty = s.isPty !== false;
    this.term.reset();
    // Pipes carry bare "\n"; without a pty nobody turns it into "\r\n".
    this.term.options.convertEol = !o.isPty;
    this.term.options.disableStdin = !o.canType;
    // The screen is drawn for the host's size: take it before the write is
    // parsed (a person who may resize fits the pane again below).
    if (screenOf(s)) this.follow();
    this.writeReplayed(snapshotText(s));
    this.renderHead();
    o.probe = 0;
    if (o.lifecycle.status === 'running' && o.canType && !this.grants) {
      // An empty input changes nothing on the host; its echo says whether
      // this person may type here (a refusal carries the reason). Until it
      // is answered the view fits the pane but its size is not sent: a
      // viewer who may not type must not ask to resize either.
      o.probe = this.client.dispatch(o.uri, { type: 'terminal/input', data: '' });
    }
    this.layout();
    if (o.canType) this.term.focus();
  }

  // mayResize says whether this page may set the terminal's size: it may
  // type there (see the probe in applySnapshot), the host has not refused
  // a resize, and the process still runs.
  mayResize(o) {
    return o.canResize && o.canType && o.lifecycle.status === 'running' && !o.gone;
  }

  // layout sizes xterm.js: to the pane (as many whole rows and columns as
  // fit) when this person may resize the terminal, else to the terminal's
  // own size. It runs whenever the pane changes size (ResizeObserver: the
  // window, the layout, a banner coming or going).
  layout() {
    const o = this.open;
    if (!this.term || !o) return;
    if (this.mayResize(o)) {
      this.fit.fit();
      if (o.subscribed) this.sizeChanged(this.term.cols, this.term.rows);
      return;
    }
    this.follow();
  }

  // follow sizes the view to the host's size (for viewers, and after
  // someone else resized the terminal).
  follow() {
    const o = this.open;
    if (this.term) ui.screen.dataset.viewSize = `${this.term.cols}x${this.term.rows}`; // when no resize follows
    if (!o || !o.cols || !o.rows || (this.term.cols === o.cols && this.term.rows === o.rows)) return;
    this.following = true;
    try {
      this.term.resize(o.cols, o.rows);
    } finally {
      this.following = false;
    }
  }

  // sizeChanged notes the view's size and, once it has settled, tells the
  // host with terminal/resized: only when this page may resize the terminal
  // and the size differs from the host's and from what was last asked.
  sizeChanged(cols, rows) {
    ui.screen.dataset.viewSize = `${cols}x${rows}`;
    const o = this.open;
    if (this.following || !o || !o.subscribed || !this.mayResize(o)) return;
    clearTimeout(this.resizeTimer);
    this.resizeTimer = setTimeout(() => {
      // What was true when the size changed may not be now (the probe was
      // refused, the process ended, another terminal was opened).
      if (this.open !== o || !o.subscribed || !this.mayResize(o) || o.probe) return;
      const { cols: c, rows: r } = this.term;
      const want = `${c}x${r}`;
      if (o.sent === want || (c === o.cols && r === o.rows)) return;
      if (this.client.dispatch(o.uri, { type: 'terminal/resized', cols: c, rows: r })) o.sent = want;
    }, 120);
  }

  // hostSize records the size the host confirmed (also on the screen
  // element, where a test can compare it with the view's).
  hostSize(o, cols, rows) {
    o.cols = cols;
    o.rows = rows;
    if (this.open === o) ui.screen.dataset.hostSize = `${cols}x${rows}`;
  }

  type(data) {
    const o = this.open;
    if (!o || !o.subscribed || !o.canType || o.gone || o.lifecycle.status !== 'running') return;
    if (!this.client.dispatch(o.uri, { type: 'terminal/input', data })) {
      toast('Not connected: what you type is not sent until the connection is back.', 'info');
    }
  }

  // writeReplayed writes output that is history, not live: whatever the
  // terminal answers while parsing it is dropped (see ensureTerm).
  writeReplayed(data) {
    this.replaying++;
    ui.screen.dataset.replaying = String(this.replaying);
    this.term.write(data, () => {
      this.replaying--;
      ui.screen.dataset.replaying = String(this.replaying);
    });
  }

  onAction(env, replayed) {
    const a = env.action || {};
    if (env.channel === ROOT) {
      if (a.type === 'root/terminalsChanged') this.setTerminals(a.terminals);
      return;
    }
    const o = this.open;
    if (!o || env.channel !== o.uri) return;
    const mine = env.origin && env.origin.clientId === this.clientId;
    const answersProbe = mine && o.probe && env.origin.clientSeq === o.probe;
    if (answersProbe) o.probe = 0;
    if (env.rejectionReason !== undefined) {
      if (mine) this.rejected(o, a, String(env.rejectionReason));
      return;
    }
    if (answersProbe) this.layout(); // this person may type: the view's size may go to the host now
    if (!o.subscribed || (Number.isSafeInteger(env.serverSeq) && env.serverSeq <= o.fromSeq)) return;
    switch (a.type) {
      case 'terminal/data':
        if (typeof a.data !== 'string') break;
        if (replayed) this.writeReplayed(a.data);
        else this.term.write(a.data);
        break;
      case 'terminal/exited':
        o.lifecycle = { status: 'exited', exitCode: a.exitCode };
        this.renderHead();
        break;
      case 'terminal/titleChanged':
        o.title = typeof a.title === 'string' ? a.title : o.title;
        this.renderHead();
        break;
      case 'terminal/claimed':
        o.claim = a.claim;
        this.renderHead();
        break;
      case 'terminal/resized':
        if (Number.isSafeInteger(a.cols) && Number.isSafeInteger(a.rows)) {
          this.hostSize(o, a.cols, a.rows);
          if (!mine) {
            o.sent = '';
            this.follow();
          }
        }
        break;
      case 'terminal/cleared':
        this.term.clear();
        break;
      default:
        break; // terminal/input echoes and anything newer: nothing to show
    }
  }

  rejected(o, action, reason) {
    if (o.gone || o.lifecycle.status !== 'running') return; // the process ended: not a question of grants
    switch (action.type) {
      case 'terminal/input':
        this.setReadOnly(o, reason);
        break;
      case 'terminal/resized':
        o.canResize = false;
        o.sent = '';
        if (o.canType) this.setNote(o, `The size follows the host: ${reason}`);
        this.follow();
        break;
      default:
        toast(`${action.type} refused: ${reason}`);
    }
  }

  setReadOnly(o, reason) {
    o.canType = false;
    o.canResize = false;
    o.readOnly = reason;
    if (this.term && this.open === o) {
      this.term.options.disableStdin = true;
      ui.screen.classList.add('readonly');
      this.follow();
    }
    this.renderHead();
  }

  setNote(o, text) {
    o.note = text;
    this.renderHead();
  }

  markGone(o, text) {
    o.gone = true;
    o.subscribed = false;
    this.client.subscriptions.delete(o.uri);
    if (this.term) this.term.options.disableStdin = true;
    this.setNote(o, text);
  }

  renderHead() {
    const o = this.open;
    if (!o) {
      ui.title.textContent = 'No terminal open';
      ui.status.hidden = true;
      ui.close.hidden = true;
      show(ui.claim, '');
      show(ui.readonly, '');
      show(ui.note, '');
      this.renderTitle();
      return;
    }
    ui.title.textContent = o.title;
    ui.title.title = o.uri;
    this.renderTitle();
    ui.status.hidden = false;
    ui.status.textContent = o.gone ? 'closed' : statusText(o.lifecycle);
    ui.status.className = o.gone ? 'badge exited' : statusClass(o.lifecycle);
    show(ui.claim, o.claim ? `claimed by ${this.claimText(o.claim)}` : '');
    ui.close.hidden = o.gone || !this.may('terminal:dispose');
    this.closable(ui.close);
    show(ui.readonly, o.readOnly ? `Read-only: ${o.readOnly}` : '');
    let note = o.note;
    if (!note && !o.gone && o.lifecycle.status === 'exited') note = 'The process has ended; this is its last output.';
    if (!note && !this.client.connected && this.client.handshaken) note = 'Reconnecting: the screen catches up once the connection is back.';
    show(ui.note, note);
  }
}

function showSignIn(reason = '') {
  ui.workspace.hidden = true;
  ui.signOut.hidden = true;
  ui.signin.hidden = false;
  show(ui.signinReason, reason);
  ui.conn.textContent = 'signed out';
  ui.conn.dataset.state = 'offline';
  ui.tokenInput.focus();
}

function main() {
  takeTokenFromFragment();
  ui.signOut.addEventListener('click', signOut);
  ui.signinForm.addEventListener('submit', (e) => {
    e.preventDefault();
    const t = ui.tokenInput.value.trim();
    ui.tokenInput.value = '';
    if (!t) return;
    setToken(t);
    location.reload();
  });
  // A sign-in link opened in a tab that already shows the page.
  window.addEventListener('hashchange', () => {
    if (takeTokenFromFragment()) location.reload();
  });
  const t = token();
  if (!t) {
    showSignIn();
    return;
  }
  window.shellgate = new App(t);
  window.shellgate.start();
}

main();

// hostOf names the machine a root-list entry runs on (its _meta's
// shellgate/host); a daemon that does not say runs it on its own.
function hostOf(t) {
  const host = t && t._meta && t._meta['shellgate/host'];
  return typeof host === 'string' && host ? `on ${host}` : 'on main';
}
