import { epoch } from '@svc/domain';
import { randomInt } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocket, type RawData } from 'ws';
import { reachPeer, reachRouteOf } from '../common/http/forwarded-peer';
import { parseJsonObject } from '../common/sockets/json-object';
import { mayQueue, SocketGuards, type SocketLimits } from '../common/sockets/socket-guard';
import type { ReachView } from '../common/auth/tokens';
import { decodeHostFrame, encodeHostFrame, FLAG_CLOSE, HEADER_SIZE, ID_RE, MAX_FRAME, newId, REACH_PROTOCOL, tokenSha256 } from './protocol';
import { openHostStream, type HostStream } from './host-stream';
import { RouteGate } from './route-gate';
import { brokerUrls } from './connector-config';

export type ReachState = 'disabled' | 'unavailable' | 'stopped' | 'connecting' | 'connected' | 'backoff';

/** Revokes kept for the next registration at most (routes that ended while Reach was down). */
const MAX_UNSENT_REVOKES = 10_000;

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
  private readonly streams = new Map<string, HostStream>();
  /** Which streams ride which route, and when a route's revoke may go to the broker. */
  private readonly routes = new RouteGate();
  private readonly revoking = new Map<string, Promise<void>>();
  /** Revokes the broker did not acknowledge: sent again once registered. */
  private readonly unsentRevokes = new Set<string>();
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
      /** A stream the broker opened, with the peer it stands for (common/http/forwarded-peer.ts `reachPeer`). */
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
    for (const s of this.streams.values()) s.duplex.destroy();
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
        for (const id of this.unsentRevokes) this.revokeRoute(id).catch(() => undefined);
        return;
      }
      if (m.type === 'error') {
        failure = `the broker refused: ${String(m.code).slice(0, 40)}`;
        return;
      }
      if (m.type === 'open') {
        if (typeof m.stream_id !== 'string' || !ID_RE.test(m.stream_id)) return this.dropFrame('an open without a valid stream_id');
        return this.openStream(m.stream_id, openCredential(m));
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
      for (const s of this.streams.values()) s.duplex.destroy();
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

  private openStream(id: string, credential: OpenCredential | null): void {
    const ws = this.ws;
    const routeId = credential?.kind === 'route' ? credential.id : null;
    if (!ws || this.streams.size >= (this.opts.streamLimit ?? 16) || (routeId !== null && !this.routes.admits(routeId))) {
      if (ws && mayQueue(ws)) ws.send(encodeHostFrame(FLAG_CLOSE, id), { binary: true });
      return;
    }
    const stream = openHostStream(ws, id, routeId, this.opts.limits.bufferBytes, (s) => {
      if (this.streams.get(id) !== s) return;
      this.streams.delete(id);
      this.completed++;
    });
    this.streams.set(id, stream);
    this.routes.track(stream);
    this.opts.accept(stream.duplex, reachPeer(credential));
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
    const stream = this.streams.get(f.streamId);
    if (!stream) return;
    const s = stream.duplex;
    if (f.flags === FLAG_CLOSE) {
      stream.markBrokerClosed();
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

  /**
   * Revokes a route credential at the broker once what the relay wrote to its streams went out (route-gate.ts).
   * One the broker did not acknowledge (Reach down) is sent again after the next registration.
   */
  revokeRoute(credentialId: string): Promise<void> {
    const inFlight = this.revoking.get(credentialId);
    if (inFlight) return inFlight;
    const done = (async () => {
      await this.routes.settle(credentialId);
      try {
        await this.control(`revoke:${credentialId}`, { type: 'revoke', credential_kind: 'route', credential_id: credentialId });
        this.unsentRevokes.delete(credentialId);
        this.routes.revoked(credentialId);
      } catch (err) {
        if (this.unsentRevokes.size < MAX_UNSENT_REVOKES) this.unsentRevokes.add(credentialId);
        throw err;
      }
    })().finally(() => this.revoking.delete(credentialId));
    this.revoking.set(credentialId, done);
    return done;
  }

  /** While held, the route a Reach peer came by (`route:<id> via reach`) is not revoked; null for any other peer. */
  holdRevoke(peer: string): (() => void) | null {
    const routeId = reachRouteOf(peer);
    return routeId === null ? null : this.routes.hold(routeId);
  }
}

/**
 * The credential an `open` says the client matched with (this broker adds `credential_kind` and
 * `credential_id`; a broker that does not leaves the stream keyed as the broker's): what the relay's rate
 * limits key a Reach phone by, since every Reach stream's TCP peer is the broker.
 */
type OpenCredential = { kind: 'route' | 'bootstrap'; id: string };

function openCredential(m: Record<string, unknown>): OpenCredential | null {
  const kind = m.credential_kind;
  const id = m.credential_id;
  if ((kind !== 'route' && kind !== 'bootstrap') || typeof id !== 'string' || !CREDENTIAL_ID_RE.test(id)) return null;
  return { kind, id };
}

const CREDENTIAL_ID_RE = /^[A-Za-z0-9_.-]{1,128}$/;

function toBuffer(data: RawData): Buffer {
  return Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
}
