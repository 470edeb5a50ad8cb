import { epoch } from '@svc/domain';
import { randomInt } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocket, type RawData } from 'ws';
import { atomicWrite } from '../common/atomic-write';
import { isLoopbackHost } from '../common/hosts';
import { reachPeer } from '../common/forwarded-peer';
import { parseJsonObject } from '../common/json-object';
import { mayQueue, SocketGuards, type SocketLimits } from '../common/socket-guard';
import type { ReachView } from '../common/tokens';
import {
  decodeHostFrame,
  encodeHostFrame,
  FLAG_CLOSE,
  FLAG_DATA,
  HEADER_SIZE,
  ID_RE,
  MAX_FRAME,
  newId,
  REACH_PROTOCOL,
  tokenSha256,
} from './protocol';

export type ReachState = 'disabled' | 'unavailable' | 'stopped' | 'connecting' | 'connected' | 'backoff';

/** The most a host-to-broker frame gathers before it goes (a download streams in frames of this size). */
const BATCH_BYTES = 256 * 1024;
/** How often a stream held by back-pressure looks whether the broker socket drained (as voice audio does). */
const DRAIN_POLL_MS = 10;

export class ReachConfigError extends Error {}

/** The broker's base URL (`wss://host[:port]`, a trailing `/` or `/v1/connect` taken off) and its connect URL. */
export function brokerUrls(raw: string): { base: string; connect: string } {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ReachConfigError(`RELAY_SECURE_LINK_BROKER_URL "${raw.slice(0, 80)}" is not a URL`);
  }
  if (u.protocol !== 'wss:' && !(u.protocol === 'ws:' && isLoopbackHost(u.hostname)))
    throw new ReachConfigError('RELAY_SECURE_LINK_BROKER_URL must be wss:// (ws:// only on loopback)');
  if (u.username || u.password || u.search || u.hash)
    throw new ReachConfigError('RELAY_SECURE_LINK_BROKER_URL carries no credentials, query or fragment');
  let pathname = u.pathname;
  while (pathname.endsWith('/')) pathname = pathname.slice(0, -1);
  if (pathname.endsWith('/v1/connect')) pathname = pathname.slice(0, -'/v1/connect'.length);
  const base = `${u.protocol}//${u.host}${pathname}`;
  return { base, connect: `${base}/v1/connect` };
}

/** The host id: one line, 22 base64url characters, made once (0600 in a 0700 directory). */
export function loadOrCreateHostId(file: string): string {
  if (fs.existsSync(file)) {
    const id = fs.readFileSync(file, 'utf8').trim();
    if (!ID_RE.test(id)) throw new ReachConfigError(`the Reach host id file ${file} is malformed (22 base64url characters expected)`);
    return id;
  }
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const id = newId();
  atomicWrite(file, `${id}\n`);
  return id;
}

type Pending = { resolve: () => void; reject: (e: Error) => void; timer: NodeJS.Timeout };

/**
 * The relay's side of Reach (spec 4.11): one control socket to the broker, registered with the host token
 * (from the environment only; the broker holds its digest). Each stream the broker opens becomes a
 * connection into the Secure Link origin in this process (never a loopback TCP connection, so the relay
 * never mistakes a phone for the operator); bytes are copied as they are, the TLS inside is Secure Link's.
 * States: stopped, connecting, connected, backoff (1 s doubling to 60 s, with jitter; reset after a clean
 * close). The relay tries Reach only as the clients' last route: they use direct routes first.
 */
export class ReachConnector implements ReachView {
  private ws: WebSocket | null = null;
  private stateValue: ReachState = 'stopped';
  private lastError: string | null = null;
  private delay: number;
  private timer: NodeJS.Timeout | null = null;
  private stopped = true;
  private readonly streams = new Map<string, Duplex>();
  private readonly acks = new Map<string, Pending>();
  private readonly guards: SocketGuards;
  private attempts = 0;
  private connectedAt: number | null = null;
  private completed = 0;
  private dropped = 0;
  readonly connectUrl: string;
  readonly baseUrl: string;

  constructor(
    private readonly opts: {
      brokerUrl: string;
      hostToken: string;
      hostId: string;
      /** A stream the broker opened, with the peer it stands for (common/forwarded-peer.ts `reachPeer`). */
      accept: (stream: Duplex, peer: string) => void;
      logger: Logger;
      onState?: (state: ReachState, error: string | null) => void;
      backoff?: { baseMs: number; maxMs: number };
      streamLimit?: number;
      /** PEM of a private CA for the broker (the system's CAs otherwise). */
      ca?: string;
      /**
       * The socket bounds (RELAY_SOCKET_*): the broker socket is pinged and its unsent output bounded; frames
       * are not paced here (they are many phones' bytes; each phone's own socket is paced past Secure Link).
       */
      limits: SocketLimits;
    },
  ) {
    const u = brokerUrls(opts.brokerUrl);
    this.connectUrl = u.connect;
    this.baseUrl = u.base;
    this.delay = this.base;
    this.guards = new SocketGuards(opts.limits, opts.logger, 'reach');
  }

  get hostId(): string {
    return this.opts.hostId;
  }

  private get base(): number {
    return this.opts.backoff?.baseMs ?? 1000;
  }

  get state(): ReachState {
    return this.stateValue;
  }

  get connected(): boolean {
    return this.stateValue === 'connected';
  }

  status() {
    return {
      enabled: true,
      state: this.stateValue,
      connected: this.connected,
      broker_url: this.baseUrl,
      host_id: this.opts.hostId,
      active_streams: this.streams.size,
      stream_limit: this.opts.streamLimit ?? 16,
      completed_streams: this.completed,
      dropped_frames: this.dropped,
      connect_attempts: this.attempts,
      connected_at: epoch(this.connectedAt),
      last_error: this.lastError,
      transport: 'opaque_inner_tls',
    };
  }

  start(): void {
    this.stopped = false;
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    this.guards.stop();
    if (this.timer) clearTimeout(this.timer);
    this.ws?.close(1001, 'relay stopping');
    this.ws = null;
    for (const s of this.streams.values()) s.destroy();
    this.setState('stopped', null);
  }

  private setState(state: ReachState, error: string | null): void {
    if (error !== null) this.lastError = error.slice(0, 500);
    if (state === this.stateValue) return;
    this.stateValue = state;
    this.opts.onState?.(state, error);
  }

  private connect(): void {
    if (this.stopped) return;
    this.attempts++;
    this.setState('connecting', null);
    const ws = new WebSocket(this.connectUrl, {
      perMessageDeflate: false,
      maxPayload: MAX_FRAME + HEADER_SIZE,
      handshakeTimeout: 10_000,
      // A zero masking key: ws then neither masks (here) nor unmasks (at the broker), which was 14% of a
      // download's CPU in pure JS. Masking guards intermediaries against attacker-chosen plaintext from a
      // browser; what this socket carries is TLS records (phones' pinned Secure Link sessions) inside wss.
      generateMask: (mask: Buffer) => void mask.fill(0),
      ...(this.opts.ca ? { ca: this.opts.ca } : {}),
    });
    this.ws = ws;
    let registered = false;
    let failure: string | null = null;
    // A broker that stops reading, or answers no ping, is a connection lost: backoff, then a new one.
    this.guards.watch(ws, {
      onCut: (cut) => (failure ??= `${cut.reason}: ${cut.reason === 'slow_consumer' ? 'the broker stopped reading' : 'the broker answered no ping'}`),
      describe: () => ({ broker: this.baseUrl }),
    });
    const regTimer = setTimeout(() => {
      failure = 'the broker did not confirm the registration within 10 s';
      ws.terminate();
    }, 10_000);
    ws.on('open', () =>
      ws.send(
        JSON.stringify({
          type: 'register',
          protocol_version: REACH_PROTOCOL,
          role: 'host',
          host_id: this.opts.hostId,
          connection_id: newId(),
          credential_kind: 'host',
          token: this.opts.hostToken,
        }),
      ),
    );
    ws.on('message', (data, isBinary) => {
      if (isBinary) return this.onData(toBuffer(data));
      // Validated before any field is read: `null`, `[]` or `42` from a broker must not end the relay.
      const m = parseJsonObject(data.toString());
      if (m === null || typeof m.type !== 'string') return this.dropFrame('a control frame that is not a JSON object with a string type');
      if (m.type === 'registered' && !registered) {
        registered = true;
        clearTimeout(regTimer);
        this.delay = this.base;
        this.connectedAt = Date.now();
        this.lastError = null;
        this.setState('connected', null);
        this.opts.logger.info({ broker: this.baseUrl }, 'reach connected');
        return;
      }
      if (m.type === 'error') {
        failure = `the broker refused: ${String(m.code).slice(0, 40)}`;
        return;
      }
      if (m.type === 'open') {
        if (typeof m.stream_id !== 'string' || !ID_RE.test(m.stream_id)) return this.dropFrame('an open without a valid stream_id');
        return this.openStream(m.stream_id, reachPeer(openCredential(m)));
      }
      if (m.type === 'published' || m.type === 'revoked') {
        const key = `${String(m.type === 'revoked' ? 'revoke' : m.credential_kind)}:${String(m.pairing_id ?? m.credential_id)}`;
        const p = this.acks.get(key);
        if (p) {
          clearTimeout(p.timer);
          this.acks.delete(key);
          p.resolve();
        }
        return;
      }
      this.dropFrame(`an unknown control type "${m.type.slice(0, 32)}"`);
    });
    ws.on('error', (err) => (failure ??= err.message));
    ws.on('close', (code) => {
      clearTimeout(regTimer);
      if (this.ws === ws) this.ws = null;
      for (const s of this.streams.values()) s.destroy();
      this.streams.clear();
      for (const [k, p] of this.acks) {
        clearTimeout(p.timer);
        p.reject(new Error('the broker connection closed'));
        this.acks.delete(k);
      }
      this.connectedAt = null;
      if (this.stopped) return;
      const clean = registered && code === 1000 && failure === null;
      if (!clean) this.opts.logger.warn({ err: failure ?? `closed ${code}` }, 'reach connection lost; backing off');
      this.setState('backoff', failure ?? (registered ? `the broker closed the connection (${code})` : `closed ${code} before registration`));
      const wait = clean ? this.base : this.delay + randomInt(0, Math.max(1, Math.floor(Math.min(1000, this.delay / 4))));
      this.delay = clean ? this.base : Math.min(this.delay * 2, this.opts.backoff?.maxMs ?? 60_000);
      this.timer = setTimeout(() => this.connect(), wait);
      this.timer.unref();
    });
  }

  private openStream(id: string, peer: string): void {
    const ws = this.ws;
    if (!ws || this.streams.size >= (this.opts.streamLimit ?? 16)) {
      if (ws && mayQueue(ws)) ws.send(encodeHostFrame(FLAG_CLOSE, id), { binary: true });
      return;
    }
    let closedByBroker = false;
    // TLS hands over one record (<= 16 KiB) per turn of the event loop (Node's JS stream socket completes
    // each write on setImmediate): a frame per record made a 1 MiB download through the broker 5.7x slower
    // than direct (docs/BENCHMARKS.md, Secure Link and Reach). Records are gathered while TLS keeps
    // writing, and sent as one frame once a turn passes without a new one (or BATCH_BYTES gathered).
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let writes = 0;
    let seen = -1;
    let scheduled = false;
    const flush = () => {
      scheduled = false;
      const chunks = pending;
      pending = [];
      pendingBytes = 0;
      if (chunks.length === 0 || ws.readyState !== ws.OPEN) return;
      const all = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      for (let i = 0; i < all.length && mayQueue(ws); i += MAX_FRAME - HEADER_SIZE)
        ws.send(encodeHostFrame(FLAG_DATA, id, all.subarray(i, i + MAX_FRAME - HEADER_SIZE)), { binary: true });
    };
    // Back-pressure: while the broker socket holds half its bound unsent, a stream's write completes only once
    // it drained to a quarter, so TLS (and the phone socket inside it, which the guard bounds) holds the rest.
    const high = this.opts.limits.bufferBytes / 2;
    const drained = (cb: () => void) => {
      if (ws.readyState !== ws.OPEN || ws.bufferedAmount + pendingBytes <= high / 2) return cb();
      setTimeout(drained, DRAIN_POLL_MS, cb).unref();
    };
    // Runs before the turn's write completion (it was scheduled first), so it looks one turn back.
    const check = () => {
      if (!scheduled) return;
      if (writes !== seen) {
        seen = writes;
        setImmediate(check);
      } else flush();
    };
    const stream = new Duplex({
      read() {},
      write: (chunk: Buffer, _enc, cb) => {
        pending.push(chunk);
        pendingBytes += chunk.length;
        writes++;
        if (pendingBytes >= BATCH_BYTES) flush();
        else if (!scheduled) {
          scheduled = true;
          seen = -1;
          setImmediate(check);
        }
        if (ws.bufferedAmount + pendingBytes > high) drained(cb);
        else cb();
      },
      final: (cb) => {
        flush();
        if (!closedByBroker && ws.readyState === ws.OPEN && mayQueue(ws)) ws.send(encodeHostFrame(FLAG_CLOSE, id), { binary: true });
        cb();
      },
      destroy: (err, cb) => {
        flush();
        if (this.streams.get(id) === stream) {
          this.streams.delete(id);
          this.completed++;
          if (!closedByBroker && ws.readyState === ws.OPEN && mayQueue(ws)) ws.send(encodeHostFrame(FLAG_CLOSE, id), { binary: true });
        }
        cb(err);
      },
    });
    (stream as Duplex & { markBrokerClosed?: () => void }).markBrokerClosed = () => (closedByBroker = true);
    this.streams.set(id, stream);
    this.opts.accept(stream, peer);
  }

  /** A frame from the broker that is not the protocol's: dropped, counted (`/health`), and logged (the first, then every 100th). */
  private dropFrame(why: string): void {
    this.dropped++;
    if (this.dropped === 1 || this.dropped % 100 === 0)
      this.opts.logger.warn({ broker: this.baseUrl, dropped_frames: this.dropped, why }, 'reach: dropped a malformed frame from the broker');
  }

  private onData(frame: Buffer): void {
    const f = decodeHostFrame(frame);
    if (!f) return this.dropFrame('a data frame that is not the protocol framing');
    const s = this.streams.get(f.streamId) as (Duplex & { markBrokerClosed?: () => void }) | undefined;
    if (!s) return;
    if (f.flags === FLAG_CLOSE) {
      s.markBrokerClosed?.();
      s.push(null);
      s.destroy();
      return;
    }
    // The broker socket is shared by every stream, so one phone whose side stopped reading (its socket paced or
    // paused by the guard inside TLS) cannot pause it: that stream alone ends once it holds the bound unread.
    if (!s.push(f.payload) && s.readableLength > this.opts.limits.bufferBytes) {
      this.opts.logger.warn({ broker: this.baseUrl, buffered_bytes: s.readableLength }, 'reach stream closed: its phone side stopped reading');
      s.destroy();
    }
  }

  private control(key: string, body: Record<string, unknown>): Promise<void> {
    const ws = this.ws;
    if (!ws || !this.connected) return Promise.reject(new Error('Reach is not connected'));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.acks.delete(key);
        reject(new Error('the broker did not acknowledge within 10 s'));
      }, 10_000);
      this.acks.set(key, { resolve, reject, timer });
      if (mayQueue(ws)) ws.send(JSON.stringify({ protocol_version: REACH_PROTOCOL, ...body }));
    });
  }

  /** A one-use bootstrap credential for a pairing QR (the broker stores its digest). */
  publishBootstrap(pairingId: string, token: string, expiresAt: number): Promise<void> {
    return this.control(`bootstrap:${pairingId}`, {
      type: 'publish_bootstrap',
      pairing_id: pairingId,
      token_sha256: tokenSha256(token),
      expires_at: expiresAt,
      max_uses: 1,
    });
  }

  /** A route credential for a paired session (the broker lets it carry several streams at once, to its bound). */
  publishRoute(credentialId: string, token: string, expiresAt: number, deviceIdHash: string): Promise<void> {
    return this.control(`route:${credentialId}`, {
      type: 'publish_route',
      credential_id: credentialId,
      token_sha256: tokenSha256(token),
      expires_at: expiresAt,
      device_id_hash: deviceIdHash,
    });
  }

  revokeRoute(credentialId: string): Promise<void> {
    return this.control(`revoke:${credentialId}`, { type: 'revoke', credential_kind: 'route', credential_id: credentialId });
  }
}

/**
 * The credential an `open` says the client matched with (this broker adds `credential_kind` and
 * `credential_id`; a broker that does not leaves the stream keyed as the broker's): what the relay's rate
 * limits key a Reach phone by, since every Reach stream's TCP peer is the broker.
 */
function openCredential(m: Record<string, unknown>): { kind: 'route' | 'bootstrap'; id: string } | null {
  const kind = m.credential_kind;
  const id = m.credential_id;
  if ((kind !== 'route' && kind !== 'bootstrap') || typeof id !== 'string' || !CREDENTIAL_ID_RE.test(id)) return null;
  return { kind, id };
}

const CREDENTIAL_ID_RE = /^[A-Za-z0-9_.-]{1,128}$/;

function toBuffer(data: RawData): Buffer {
  return Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
}
