// The agent sessions panel: polls the agent gate's REST API, shows each
// session's control state and pending approval, and sends a person's
// decisions (approve / deny) and takeovers (interrupt / resume).

import { el } from './dom.js';

const API = '/api/agent-terminal';
const POLL_MS = 2000;
const POLL_UNSERVED_MS = 10000; // the host has no agent gate: ask rarely
// Answers that mean "no agent gate here" rather than an error: a host without
// the REST API answers 404, or 426 when its WebSocket endpoint takes the path.
const UNSERVED = new Set([404, 405, 426, 501]);
const DETAIL_LIMIT = 25; // sessions whose details are fetched per poll

/**
 * AgentPanel renders into the elements it is given.
 * token() returns the bearer token; userId() the signed-in person's id when
 * the host told it ('' otherwise), sent as user_id.
 */
export class AgentPanel {
  constructor({ list, empty, error, count, token, userId, onUnauthorized }) {
    this.list = list;
    this.empty = empty;
    this.error = error;
    this.count = count;
    this.token = token;
    this.userId = userId;
    this.onUnauthorized = onUnauthorized;
    this.timer = 0;
    this.running = false;
    this.cards = new Map(); // session_id -> {node, key}
    this.busy = new Set(); // session ids with a request in flight
    this.notes = new Map(); // session_id -> {text, kind}
    this.sessions = [];
  }

  start() {
    if (this.running) return;
    this.running = true;
    this.poll();
  }

  stop() {
    this.running = false;
    clearTimeout(this.timer);
  }

  async call(method, path, body) {
    const headers = { Accept: 'application/json', Authorization: `Bearer ${this.token()}` };
    const init = { method, headers, cache: 'no-store', credentials: 'omit', redirect: 'error' };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const resp = await fetch(API + path, init);
    const text = await resp.text();
    let data = null;
    if (text) {
      try {
        data = JSON.parse(text);
      } catch {
        data = text;
      }
    }
    return { status: resp.status, ok: resp.ok, data };
  }

  async poll() {
    clearTimeout(this.timer);
    if (!this.running) return;
    let next = POLL_MS;
    try {
      const r = await this.call('GET', '/sessions');
      if (UNSERVED.has(r.status)) {
        next = POLL_UNSERVED_MS;
        this.sessions = [];
        this.showError('');
        this.render('This host does not serve the agent gate yet, so there are no agent sessions to show.');
      } else if (!r.ok) {
        this.showError(`Could not list agent sessions: ${describe(r)}`);
        this.render('');
        if (r.status === 401) this.onUnauthorized?.();
      } else {
        const sessions = Array.isArray(r.data?.sessions) ? r.data.sessions : [];
        await this.fillDetails(sessions);
        this.sessions = sessions;
        this.showError('');
        this.render(sessions.length ? '' : 'No agent sessions.');
      }
    } catch (err) {
      this.showError(`Could not reach the agent API: ${err.message}`);
      this.render('');
    }
    if (this.running) this.timer = setTimeout(() => this.poll(), next);
  }

  // The list may leave out pending approvals (the seed's list entries do);
  // the detail of a session carries it.
  async fillDetails(sessions) {
    const lacking = sessions.filter((s) => s && s.session_id && !('pending_approval' in s)).slice(0, DETAIL_LIMIT);
    await Promise.all(lacking.map(async (s) => {
      try {
        const r = await this.call('GET', `/sessions/${encodeURIComponent(s.session_id)}`);
        if (r.ok && r.data && typeof r.data === 'object') {
          for (const [k, v] of Object.entries(r.data)) if (k !== 'status') s[k] = v;
        }
      } catch {
        // Shown as it is; the next poll tries again.
      }
    }));
  }

  showError(text) {
    this.error.textContent = text;
    this.error.hidden = !text;
  }

  render(emptyText) {
    this.empty.textContent = emptyText;
    this.empty.hidden = !emptyText;
    const seen = new Set();
    let pending = 0;
    let previous = null;
    for (const s of this.sessions) {
      if (!s || !s.session_id) continue;
      const id = String(s.session_id);
      seen.add(id);
      if (s.pending_approval) pending++;
      const note = this.notes.get(id);
      // Rebuild a card only when what it shows changed, so a button does
      // not vanish under the pointer every two seconds.
      const key = JSON.stringify([s, this.busy.has(id), note]);
      let card = this.cards.get(id);
      if (!card || card.key !== key) {
        const node = this.card(s, id, note);
        if (card) card.node.replaceWith(node);
        card = { node, key };
        this.cards.set(id, card);
      }
      const want = previous ? previous.nextSibling : this.list.firstChild;
      if (card.node !== want) this.list.insertBefore(card.node, want);
      previous = card.node;
    }
    for (const [id, card] of this.cards) {
      if (!seen.has(id)) {
        card.node.remove();
        this.cards.delete(id);
        this.notes.delete(id);
      }
    }
    this.count.textContent = pending === 1 ? '1 waiting' : `${pending} waiting`;
    this.count.hidden = pending === 0;
  }

  card(s, id, note) {
    const busy = this.busy.has(id);
    const state = String(s.state || 'unknown');
    const head = el('div', { class: 'session-head' },
      el('span', { class: 'agent', 'data-testid': 'session-agent' }, String(s.agent_id || 'agent')),
      el('span', { class: 'badge' }, String(s.agent_role || 'role?')),
      el('span', { class: 'badge state', 'data-testid': 'session-state' }, state.replaceAll('_', ' ')));
    const meta = [];
    if (s.command_count !== undefined) meta.push(`${s.command_count} command${s.command_count === 1 ? '' : 's'}`);
    if (s.host) meta.push(`host ${s.host}`);
    if (s.conversation_id) meta.push(`conversation ${s.conversation_id}`);
    meta.push(`session ${id}`);
    const node = el('article', { class: 'session', 'data-testid': 'agent-session', 'data-session-id': id },
      head,
      el('div', { class: 'session-meta' }, meta.join(' · ')));

    const p = s.pending_approval;
    if (p) {
      const risk = String(p.risk || 'unknown').toLowerCase();
      const reasons = Array.isArray(p.reasons) ? p.reasons : [];
      const agent = p.agent_id || s.agent_id || 'agent';
      const role = p.agent_role || s.agent_role || 'unknown role';
      node.append(el('section', { class: 'approval', 'data-testid': 'approval', 'aria-label': 'Pending approval' },
        el('div', { class: 'approval-title' }, 'Waiting for your approval'),
        el('code', { class: 'command', 'data-testid': 'approval-command' }, String(p.command ?? '')),
        el('div', { class: 'facts' },
          el('span', { class: `badge risk-${risk.replace(/[^a-z]/g, '')}`, 'data-testid': 'approval-risk' }, `risk: ${risk}`),
          el('span', { 'data-testid': 'approval-agent' }, `agent ${agent}`),
          el('span', { 'data-testid': 'approval-role' }, `role ${role}`)),
        reasons.length ? el('ul', { 'data-testid': 'approval-reasons' }, ...reasons.map((r) => el('li', {}, String(r)))) : null,
        el('div', { class: 'actions' },
          this.button('Approve', 'approve', 'approve-button', busy, () => this.decide(id, true), `Approve: ${p.command ?? ''}`),
          this.button('Deny', 'deny', 'deny-button', busy, () => this.decide(id, false), `Deny: ${p.command ?? ''}`))));
    }

    const agentHasControl = state === 'agent_control' || state === 'agent_resume';
    const personHasControl = state === 'user_control' || state === 'user_interrupt';
    node.append(el('div', { class: 'actions' },
      this.button('Interrupt', '', 'interrupt-button', busy || personHasControl, () => this.control(id, 'interrupt'),
        'Interrupt the agent and take control'),
      this.button('Resume', '', 'resume-button', busy || agentHasControl, () => this.control(id, 'resume'),
        'Give control back to the agent')));
    if (note) node.append(el('p', { class: `note ${note.kind}`, 'data-testid': 'session-note', role: 'status' }, note.text));
    return node;
  }

  button(label, kind, testid, disabled, onClick, ariaLabel) {
    const b = el('button', { class: `btn small ${kind}`.trim(), type: 'button', 'data-testid': testid, 'aria-label': ariaLabel }, label);
    b.disabled = disabled;
    b.addEventListener('click', onClick);
    return b;
  }

  async decide(id, approved) {
    const body = { approved };
    if (this.userId()) body.user_id = this.userId(); // optional: the host knows who signed in
    await this.act(id, `/sessions/${encodeURIComponent(id)}/approve`, body, (d) => {
      if (!approved) return 'Denied.';
      const rc = d?.result?.return_code;
      return rc === undefined ? 'Approved.' : `Approved; the command exited with code ${rc}.`;
    });
  }

  async control(id, what) {
    // The seed requires user_id on interrupt; the host records the signed-in
    // person either way, so without a known name the page says where it is.
    const body = what === 'interrupt' ? { user_id: this.userId() || 'web page' } : {};
    await this.act(id, `/sessions/${encodeURIComponent(id)}/${what}`, body, (d) =>
      d?.message ? String(d.message) : what === 'interrupt' ? 'You have control.' : 'The agent has control again.');
  }

  async act(id, path, body, describeOk) {
    this.busy.add(id);
    this.render(this.empty.textContent);
    let note;
    try {
      const r = await this.call('POST', path, body);
      note = r.ok ? { kind: 'ok', text: describeOk(r.data) } : { kind: 'error', text: describe(r) };
    } catch (err) {
      note = { kind: 'error', text: `Could not reach the agent API: ${err.message}` };
    }
    this.busy.delete(id);
    this.notes.set(id, note);
    this.render(this.empty.textContent);
    this.poll();
  }
}

/** describe words a failed REST answer: status, the API's code and message. */
export function describe(r) {
  const d = r.data;
  const parts = [`HTTP ${r.status}`];
  if (d && typeof d === 'object') {
    const code = d.code || d.error_code;
    const msg = d.error || d.message || d.detail || d.reason;
    if (code && code !== msg) parts.push(String(code));
    if (msg) parts.push(typeof msg === 'string' ? msg : JSON.stringify(msg));
  } else if (typeof d === 'string' && d.trim()) {
    parts.push(d.trim().slice(0, 300));
  }
  return parts.join(' · ');
}
