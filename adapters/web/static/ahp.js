// A small Agent Host Protocol client over one browser WebSocket: JSON-RPC
// 2.0 requests and notifications, action envelopes, and reconnection with
// backoff that resumes with `reconnect` (lastSeenServerSeq) and falls back to
// a fresh `initialize` when the host no longer knows this client.

export const ROOT = 'ahp-root://';

/** Error codes the page reacts to (see the protocol's error table). */
export const Codes = Object.freeze({
  ConnectionLost: -32000, // local only: the socket closed before an answer
  MethodNotFound: -32601,
  InvalidParams: -32602,
  UnsupportedProtocolVersion: -32005,
  AuthRequired: -32007,
  NotFound: -32008,
  PermissionDenied: -32009,
});

/** A JSON-RPC error answer (or a local failure with code ConnectionLost). */
export class RpcError extends Error {
  constructor(code, message, data) {
    super(message || `error ${code}`);
    this.name = 'RpcError';
    this.code = code;
    this.data = data;
  }
}

const BACKOFF_MS = [500, 1000, 2000, 4000, 8000, 15000];
const PING_EVERY_MS = 25000;
const PING_PATIENCE_MS = 10000;

/**
 * AhpClient keeps one connection to the host alive.
 *
 * Callbacks (all optional):
 *  onStatus({state, detail, retryInMs})  state: connecting | connected | reconnecting | failed
 *  onSync({snapshots, fresh, afterLoss}) once connected, after initialize (fresh) or a
 *                                        reconnect answered with snapshots
 *  onAction(envelope, replayed)          every action envelope, in order; replayed is true
 *                                        for those a reconnect replays
 *  onMissing(uris)                       channels a replay could not resume
 *  onNotification(method, params)        any other notification (e.g. auth/required)
 *  onClosed({opened, code, reason})      the socket closed; true stops retrying
 */
export class AhpClient {
  constructor({ url, clientId, versions, clientInfo, nextClientSeq, callbacks }) {
    this.url = url;
    this.clientId = clientId;
    this.versions = versions;
    this.clientInfo = clientInfo;
    this.nextClientSeq = nextClientSeq; // () => number, strictly increasing
    this.cb = callbacks || {};
    this.ws = null;
    this.nextId = 1;
    this.pending = new Map();
    this.subscriptions = new Set([ROOT]);
    this.lastSeq = 0;
    this.handshaken = false; // a handshake succeeded at least once
    this.connected = false; // the current socket finished its handshake
    this.attempt = 0;
    this.stopped = false;
    this.retryTimer = 0;
    this.pingTimer = 0;
    this.protocolVersion = '';
    this.lastHandshake = ''; // initialize | replay | snapshot: how the last connection started
  }

  /** Opens the first connection. */
  start() {
    this.stopped = false;
    this.connect();
  }

  /** Closes the connection for good (sign-out, page teardown). */
  stop() {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.pingTimer);
    if (this.ws) {
      this.ws.close(1000, 'signed out');
      this.ws = null;
    }
    this.failPending('the page closed the connection');
  }

  connect() {
    clearTimeout(this.retryTimer);
    this.status(this.handshaken ? 'reconnecting' : 'connecting', 'opening the connection');
    let ws;
    try {
      ws = new WebSocket(this.url);
    } catch (err) {
      this.status('failed', `cannot open a WebSocket: ${err.message}`);
      return;
    }
    this.ws = ws;
    let opened = false;
    ws.onopen = () => {
      opened = true;
      this.handshake(ws);
    };
    ws.onmessage = (ev) => {
      if (ws === this.ws) this.receive(ev.data);
    };
    ws.onclose = (ev) => {
      if (ws !== this.ws) return;
      this.ws = null;
      this.connected = false;
      clearInterval(this.pingTimer);
      this.failPending('the connection closed');
      if (this.stopped) return;
      // The page may know better than to retry: a token the host no
      // longer accepts (refused at the door, or revoked: 1008).
      if (this.cb.onClosed?.({ opened, code: ev.code, reason: ev.reason || '' })) {
        this.stopped = true;
        return;
      }
      let why;
      if (!opened) {
        why = 'the host refused the connection or is not reachable (is the token right?)';
      } else if (ev.reason) {
        why = `closed by the host: ${ev.reason}`;
      } else {
        why = `connection lost (code ${ev.code})`;
      }
      this.scheduleRetry(why);
    };
  }

  scheduleRetry(why) {
    const base = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)];
    const delay = Math.round(base * (0.8 + Math.random() * 0.4));
    this.attempt++;
    this.status('reconnecting', why, delay);
    this.retryTimer = setTimeout(() => this.connect(), delay);
  }

  async handshake(ws) {
    let sync;
    try {
      sync = this.handshaken ? await this.resume() : await this.initialize(false);
    } catch (err) {
      if (ws !== this.ws) return;
      if (err.code === Codes.UnsupportedProtocolVersion) {
        this.stopped = true;
        this.status('failed', `this host speaks none of the page's protocol versions: ${err.message}`);
        ws.close();
        return;
      }
      if (err.code !== Codes.ConnectionLost) {
        this.status('reconnecting', `handshake failed: ${err.message}`);
        ws.close(4000, 'handshake failed');
      }
      return;
    }
    if (ws !== this.ws) return;
    this.connected = true;
    this.handshaken = true;
    this.attempt = 0;
    this.status('connected', `protocol ${this.protocolVersion}`);
    this.startPings(ws);
    // After `connected`, so the page may send requests from the callback.
    if (sync) this.cb.onSync?.(sync);
  }

  async initialize(afterLoss) {
    const subs = [...this.subscriptions];
    const result = await this.request('initialize', {
      channel: ROOT,
      protocolVersions: this.versions,
      clientId: this.clientId,
      clientInfo: this.clientInfo,
      initialSubscriptions: subs,
      locale: navigator.language || undefined,
    }, true);
    this.protocolVersion = result.protocolVersion;
    this.noteSeq(result.serverSeq);
    const snapshots = result.snapshots || [];
    for (const s of snapshots) this.noteSeq(s.fromSeq);
    // Channels the host left out are no longer subscribed.
    const got = new Set(snapshots.map((s) => s.resource));
    for (const uri of subs) if (uri !== ROOT && !got.has(uri)) this.subscriptions.delete(uri);
    this.lastHandshake = 'initialize';
    return { snapshots, fresh: true, afterLoss, meta: result._meta };
  }

  async resume() {
    let result;
    try {
      result = await this.request('reconnect', {
        channel: ROOT,
        clientId: this.clientId,
        lastSeenServerSeq: this.lastSeq,
        subscriptions: [...this.subscriptions],
      }, true);
    } catch (err) {
      if (err.code === Codes.NotFound || err.code === Codes.MethodNotFound || err.code === Codes.InvalidParams) {
        // The host forgot this client (it restarted, say): start afresh.
        this.lastSeq = 0;
        return this.initialize(true);
      }
      throw err;
    }
    this.lastHandshake = result.type === 'replay' ? 'replay' : 'snapshot';
    if (result.type === 'replay') {
      for (const env of result.actions || []) this.deliver(env, true);
      const missing = result.missing || [];
      for (const uri of missing) this.subscriptions.delete(uri);
      if (missing.length) this.cb.onMissing?.(missing);
      return null;
    }
    const snapshots = result.snapshots || [];
    for (const s of snapshots) this.noteSeq(s.fromSeq);
    return { snapshots, fresh: false, afterLoss: true };
  }

  startPings(ws) {
    clearInterval(this.pingTimer);
    this.pingTimer = setInterval(() => {
      if (ws !== this.ws || !this.connected) return;
      const timer = setTimeout(() => {
        if (ws === this.ws) ws.close(4001, 'the host did not answer a ping');
      }, PING_PATIENCE_MS);
      this.request('ping', { channel: ROOT }).then(() => clearTimeout(timer), () => clearTimeout(timer));
    }, PING_EVERY_MS);
  }

  status(state, detail, retryInMs) {
    this.cb.onStatus?.({ state, detail, retryInMs });
  }

  noteSeq(seq) {
    if (Number.isSafeInteger(seq) && seq > this.lastSeq) this.lastSeq = seq;
  }

  /**
   * Sends a request and resolves with its result or rejects with RpcError.
   * Before the handshake only the handshake itself may be sent.
   */
  request(method, params, duringHandshake = false) {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN || (!this.connected && !duringHandshake)) {
      return Promise.reject(new RpcError(Codes.ConnectionLost, 'not connected to the host'));
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, method });
      ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  /** Sends a notification; false when there is no live connection. */
  notify(method, params) {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN || !this.connected) return false;
    ws.send(JSON.stringify({ jsonrpc: '2.0', method, params }));
    return true;
  }

  /** Subscribes and resolves with the channel's snapshot. */
  async subscribe(channel) {
    const result = await this.request('subscribe', { channel });
    this.subscriptions.add(channel);
    if (result && result.snapshot) this.noteSeq(result.snapshot.fromSeq);
    return result ? result.snapshot : null;
  }

  unsubscribe(channel) {
    if (channel === ROOT) return;
    this.subscriptions.delete(channel);
    this.notify('unsubscribe', { channel });
  }

  /** Dispatches an action; returns its clientSeq, or 0 when not sent. */
  dispatch(channel, action) {
    if (!this.connected) return 0;
    const clientSeq = this.nextClientSeq();
    return this.notify('dispatchAction', { channel, clientSeq, action }) ? clientSeq : 0;
  }

  failPending(why) {
    const pending = this.pending;
    this.pending = new Map();
    for (const p of pending.values()) p.reject(new RpcError(Codes.ConnectionLost, `${p.method}: ${why}`));
  }

  receive(text) {
    let msg;
    try {
      msg = JSON.parse(text);
    } catch {
      console.warn('shellgate: unreadable frame from the host');
      return;
    }
    if (!msg || typeof msg !== 'object') return;
    if (msg.id !== undefined && msg.id !== null && !msg.method) {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (msg.error) {
        p.reject(new RpcError(msg.error.code, msg.error.message, msg.error.data));
      } else {
        p.resolve(msg.result);
      }
      return;
    }
    if (msg.method === 'action' && msg.params) {
      this.deliver(msg.params);
      return;
    }
    if (msg.method) this.cb.onNotification?.(msg.method, msg.params || {});
  }

  deliver(env, replayed = false) {
    if (!env || typeof env !== 'object' || !env.action) return;
    this.noteSeq(env.serverSeq);
    this.cb.onAction?.(env, replayed);
  }
}
