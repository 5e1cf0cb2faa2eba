// The agent sessions panel: polls the agent gate's REST API, shows each
// session's control state and pending approval, and sends a person's
// decisions (approve / deny) and takeovers (interrupt / resume).

import { el } from './dom.js';

const API = '/api/agent-terminal';
const POLL_MS = 2000;
const POLL_UNSERVED_MS = 10000; // the host has no agent gate: ask rarely
// This person's role may not list agent sessions: ask again only now and
// then, so a grant an admin adds later shows up without a reload.
const POLL_REFUSED_MS = 60000;
const POLL_FAILING_MAX_MS = 30000; // the longest wait between tries while the API fails
// Answers that mean "no agent gate here" rather than an error: a host without
// the REST API answers 404, or 426 when its WebSocket endpoint takes the path.
const UNSERVED = new Set([404, 405, 426, 501]);
const DETAIL_LIMIT = 25; // sessions whose details are fetched per poll
// The grant each call needs (shellgate's D2), for a refusal that does not
// name it.
const NEEDS = Object.freeze({
  list: 'agent:list',
  get: 'agent:get',
  decide: 'approval:decide',
  interrupt: 'control:interrupt',
  resume: 'control:resume',
});

/**
 * AgentPanel renders into the elements it is given.
 * token() returns the bearer token; userId() the signed-in person's id when
 * the host told it ('' otherwise), sent as user_id.
 *
 * What this person's role leaves out is not an error: a refused list shows
 * a calm note naming the missing grant (and is asked again only rarely),
 * and a refused decision or takeover disables those buttons, saying why.
 * The host does not say ahead of time what a role holds, so each refusal is
 * learnt from the first answer that carries it.
 */
export class AgentPanel {
  constructor({ list, empty, error, note, count, token, userId, onUnauthorized, onChange }) {
    this.list = list;
    this.empty = empty;
    this.error = error;
    this.note = note;
    this.count = count;
    this.token = token;
    this.userId = userId;
    this.onUnauthorized = onUnauthorized;
    this.onChange = onChange;
    this.grants = null; // what the host says this person may do; null: learn from refusals
    this.seen = null; // approval ids already shown; null before the first list
    this.timer = 0;
    this.running = false;
    this.cards = new Map(); // session_id -> {node, key}
    this.busy = new Set(); // session ids with a request in flight
    this.notes = new Map(); // session_id -> {text, kind}
    this.sessions = [];
    this.failures = 0; // list polls that failed in a row
    this.nextPollMs = 0; // the wait before the next list poll (tests read it)
    this.listRefused = null; // {grant, reason} while the list is refused
    this.detailsRefused = null; // {grant, reason, at} while details are refused
    this.refused = new Map(); // 'decide' | 'interrupt' | 'resume' -> {grant, reason}
  }

  // setGrants takes what the host says this person may do: the buttons for
  // what it does not allow are left out rather than offered and refused.
  setGrants(grants) {
    this.grants = grants;
    this.render(this.empty.textContent);
  }

  may(op) {
    return !this.grants || this.grants.has(op);
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
    let failure = '';
    try {
      const r = await this.call('GET', '/sessions');
      this.listRefused = null;
      if (UNSERVED.has(r.status)) {
        next = POLL_UNSERVED_MS;
        this.sessions = [];
        this.render('This host does not serve the agent gate yet, so there are no agent sessions to show.');
      } else if (r.status === 403) {
        // Not a failure: this person's role does not show agent sessions.
        next = POLL_REFUSED_MS;
        this.listRefused = refusal(r, NEEDS.list);
        this.sessions = [];
        this.render('');
      } else if (r.status === 401) {
        failure = `The agent API did not accept your sign-in (${describe(r)}). Sign out and open a fresh sign-in link.`;
        this.onUnauthorized?.();
      } else if (!r.ok) {
        failure = `Could not list agent sessions: ${describe(r)}.`;
        if (r.status >= 500 && !/\blog\b/.test(failure)) failure += ' If it keeps failing, the daemon\'s log says why.';
      } else {
        const sessions = Array.isArray(r.data?.sessions) ? r.data.sessions : [];
        await this.fillDetails(sessions);
        this.sessions = sessions;
        this.listed = true; // from now on a held command not seen before is new
        this.render(sessions.length ? '' : 'No agent sessions.');
      }
    } catch (err) {
      failure = `Could not reach the agent API (${err.message}). Check that shellgate is still running and that this browser can reach it.`;
    }
    if (failure) {
      // What was shown stays, under the error: it may be out of date.
      this.failures++;
      next = Math.min(POLL_MS * 2 ** (this.failures - 1), POLL_FAILING_MAX_MS);
      this.showError(`${failure} Trying again in ${Math.round(next / 1000)} s.`);
      this.render('');
    } else {
      this.failures = 0;
      this.showError('');
    }
    this.showNote();
    this.report(); // the error and the note are drawn only now
    this.nextPollMs = next;
    if (this.running) this.timer = setTimeout(() => this.poll(), next);
  }

  // The list may leave out pending approvals (the seed's list entries do);
  // the detail of a session carries it. A role without agent:get is asked
  // again only as rarely as a refused list.
  async fillDetails(sessions) {
    const refused = this.detailsRefused;
    if (refused && Date.now() - refused.at < POLL_REFUSED_MS) return;
    const lacking = sessions.filter((s) => s && s.session_id && !('pending_approval' in s)).slice(0, DETAIL_LIMIT);
    await Promise.all(lacking.map(async (s) => {
      try {
        const r = await this.call('GET', `/sessions/${encodeURIComponent(s.session_id)}`);
        if (r.status === 403) {
          this.detailsRefused = { ...refusal(r, NEEDS.get), at: Date.now() };
        } else if (r.ok && r.data && typeof r.data === 'object') {
          this.detailsRefused = null;
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

  // showNote says, calmly, what this person's role leaves out of the panel.
  showNote() {
    let parts = null;
    let reason = '';
    if (this.listRefused) {
      ({ reason } = this.listRefused);
      parts = ['Your role does not include ', grantCode(this.listRefused.grant),
        ', so agent sessions are not shown here. An admin can add it to your role.'];
    } else if (this.detailsRefused && this.sessions.length) {
      ({ reason } = this.detailsRefused);
      parts = ['Your role does not include ', grantCode(this.detailsRefused.grant),
        ', so pending approvals and session details are not shown here.'];
    }
    if (parts) {
      this.note.replaceChildren(...parts);
      this.note.title = reason;
    } else {
      this.note.replaceChildren();
      this.note.removeAttribute('title');
    }
    this.note.hidden = !parts;
  }

  render(emptyText) {
    this.empty.textContent = emptyText;
    this.empty.hidden = !emptyText;
    const seen = new Set();
    let pending = 0;
    let previous = null;
    const refused = [...this.refused];
    for (const s of this.sessions) {
      if (!s || !s.session_id) continue;
      const id = String(s.session_id);
      seen.add(id);
      if (s.pending_approval) pending++;
      let note = this.notes.get(id);
      // A note about a decision is about that command: once another one is
      // held (or running) it would read as the new one's outcome.
      const holding = s.pending_approval?.approval_id ? String(s.pending_approval.approval_id) : '';
      if (note && note.about && holding && holding !== note.about) {
        this.notes.delete(id);
        note = undefined;
      }
      // Rebuild a card only when what it shows changed, so a button does
      // not vanish under the pointer every two seconds.
      const key = JSON.stringify([s, this.busy.has(id), note, refused]);
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
    // Approvals first seen now (not those there when the page loaded).
    const fresh = [];
    const ids = new Set();
    for (const s of this.sessions) {
      const p = s?.pending_approval;
      if (!p) continue;
      const key = String(p.approval_id || `${s.session_id}:${p.command}`);
      ids.add(key);
      if (this.seen && !this.seen.has(key)) fresh.push({ agent: String(p.agent_id || s.agent_id || 'an agent'), command: String(p.command ?? '') });
    }
    if (this.listed) this.seen = ids;
    this.report(pending, fresh);
  }

  // report tells the page whether the panel has anything to show (it takes
  // no room when not), how many commands wait and which are new.
  report(pending = this.pending || 0, fresh = []) {
    this.pending = pending;
    const shown = this.sessions.length > 0 || !this.error.hidden || !this.note.hidden;
    this.onChange?.({ shown, pending, fresh });
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
    if (s.workspace) meta.push(`workspace ${s.workspace}`);
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
      const decide = this.refused.get('decide');
      node.append(el('section', { class: 'approval', 'data-testid': 'approval', 'aria-label': 'Pending approval' },
        el('div', { class: 'approval-title' }, decide || !this.may('approval:decide') ? 'Waiting for approval' : 'Waiting for your approval'),
        el('code', { class: 'command', 'data-testid': 'approval-command' }, String(p.command ?? '')),
        p.description ? el('p', { class: 'description', 'data-testid': 'approval-description' }, String(p.description)) : null,
        el('div', { class: 'facts' },
          el('span', { class: `badge risk-${risk.replace(/[^a-z]/g, '')}`, 'data-testid': 'approval-risk' }, `risk: ${risk}`),
          el('span', { 'data-testid': 'approval-agent' }, `agent ${agent}`),
          el('span', { 'data-testid': 'approval-role' }, `role ${role}`),
          p.sandboxed === undefined ? null
            : el('span', { 'data-testid': 'approval-sandbox' }, p.sandboxed ? 'runs sandboxed' : 'runs unconfined')),
        reasons.length ? el('ul', { 'data-testid': 'approval-reasons' }, ...reasons.map((r) => el('li', {}, String(r)))) : null,
        this.may('approval:decide') ? el('div', { class: 'actions' },
          this.button('Approve', 'approve', 'approve-button', busy, () => this.decide(id, true, p.approval_id), `Approve: ${p.command ?? ''}`, decide),
          this.button('Deny', 'deny', 'deny-button', busy, () => this.decide(id, false, p.approval_id), `Deny: ${p.command ?? ''}`, decide))
          : el('p', { class: 'note', 'data-testid': 'approval-watch-only' }, 'A person who may decide it approves or denies it; you see it as it waits.'),
        this.limit(decide, 'approve or deny commands')));
    }

    const agentHasControl = state === 'agent_control' || state === 'agent_resume';
    const personHasControl = state === 'user_control' || state === 'user_interrupt';
    const interrupt = this.refused.get('interrupt');
    const resume = this.refused.get('resume');
    const controls = [];
    if (this.may('control:interrupt')) {
      controls.push(this.button('Interrupt', '', 'interrupt-button', busy || personHasControl, () => this.control(id, 'interrupt'),
        'Interrupt the agent and take control', interrupt));
    }
    if (this.may('control:resume')) {
      controls.push(this.button('Resume', '', 'resume-button', busy || agentHasControl, () => this.control(id, 'resume'),
        'Give control back to the agent', resume));
    }
    if (controls.length) node.append(el('div', { class: 'actions' }, ...controls));
    const limits = [this.limit(interrupt, 'take control from an agent'), this.limit(resume, 'give control back to an agent')];
    if (interrupt && resume && interrupt.grant === resume.grant) limits.pop();
    node.append(...limits.filter(Boolean));
    if (note) node.append(el('p', { class: `note ${note.kind}`, 'data-testid': 'session-note', role: 'status' }, note.text));
    return node;
  }

  // button builds an action button; one the person's role refuses is
  // disabled, with the host's reason as its tooltip.
  button(label, kind, testid, disabled, onClick, ariaLabel, refused) {
    const b = el('button', {
      class: `btn small ${kind}`.trim(), type: 'button', 'data-testid': testid, 'aria-label': ariaLabel,
      title: refused ? refused.reason || `Your role does not include ${refused.grant}` : undefined,
    }, label);
    b.disabled = disabled || Boolean(refused);
    b.addEventListener('click', onClick);
    return b;
  }

  // limit says which grant a card's disabled buttons need.
  limit(refused, what) {
    if (!refused) return null;
    return el('p', { class: 'note limit', 'data-testid': 'session-limit', title: refused.reason || undefined },
      'Your role does not include ', grantCode(refused.grant), `, so you cannot ${what} here.`);
  }

  // decide answers the held command this card shows: its approval_id goes
  // along, so a card drawn before the agent's next command can never
  // approve that one (the host answers no_pending_approval instead).
  async decide(id, approved, approvalId) {
    const body = { approved };
    if (approvalId) body.approval_id = String(approvalId);
    if (this.userId()) body.user_id = this.userId(); // optional: the host knows who signed in
    await this.act(id, 'decide', `/sessions/${encodeURIComponent(id)}/approve`, body, approvalId, (d) => {
      if (!approved) return 'Denied.';
      const rc = d?.result?.return_code;
      return rc === undefined ? 'Approved.' : `Approved; the command exited with code ${rc}.`;
    });
  }

  async control(id, what) {
    // The seed requires user_id on interrupt; the host records the signed-in
    // person either way, so without a known name the page says where it is.
    const body = what === 'interrupt' ? { user_id: this.userId() || 'web page' } : {};
    await this.act(id, what, `/sessions/${encodeURIComponent(id)}/${what}`, body, '', (d) =>
      d?.message ? String(d.message) : what === 'interrupt' ? 'You have control.' : 'The agent has control again.');
  }

  // act sends one decision or takeover. A refusal for a grant is remembered
  // for every card (grants are not per session), so the buttons it concerns
  // are disabled with the reason instead of failing again.
  async act(id, what, path, body, about, describeOk) {
    this.busy.add(id);
    this.render(this.empty.textContent);
    let note;
    try {
      const r = await this.call('POST', path, body);
      if (r.ok) {
        note = { kind: 'ok', text: describeOk(r.data), about: about ? String(about) : '' };
      } else if (isGrantRefusal(r)) {
        this.refused.set(what, refusal(r, NEEDS[what]));
      } else {
        note = { kind: 'error', text: describe(r) };
      }
    } catch (err) {
      note = { kind: 'error', text: `Could not reach the agent API: ${err.message}` };
    }
    this.busy.delete(id);
    if (note) this.notes.set(id, note);
    else this.notes.delete(id);
    this.render(this.empty.textContent);
    this.poll();
  }
}

// grantCode shows a grant's name as code.
function grantCode(grant) {
  return el('code', { 'data-testid': 'missing-grant' }, grant);
}

function errorMessage(r) {
  const d = r.data;
  if (!d || typeof d !== 'object') return '';
  const msg = d.error || d.message || d.detail || d.reason;
  return typeof msg === 'string' ? msg : '';
}

/**
 * refusal reads a 403: the grant the host names ("<id> may not <grant>
 * here"), or else the one the call needs, and the host's own words.
 */
export function refusal(r, needs) {
  const reason = errorMessage(r);
  const named = /\bmay not ([\w*.-]+:[\w*.-]+) here\b/.exec(reason);
  return { grant: named ? named[1] : needs, reason };
}

// isGrantRefusal tells a missing grant from the API's other 403s (such as
// user_has_control, which is about the session's state, not the role).
function isGrantRefusal(r) {
  if (r.status !== 403) return false;
  const code = r.data && typeof r.data === 'object' ? r.data.code || r.data.error_code : '';
  return code === 'insufficient_permissions' || /\bmay not \S+ here\b/.test(errorMessage(r));
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
