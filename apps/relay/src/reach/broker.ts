import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type * as net from 'node:net';
import { SystemClock, type Clock } from '../common/loop/clock';
import { isLoopbackHost } from '../common/config/hosts';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { parseJsonObject } from '../common/sockets/json-object';
import { SocketGuards } from '../common/sockets/socket-guard';
import { TLS_LISTENER_OPTIONS } from '../common/http/tls-policy';
import { BrokerAdmission, type Outcome, type Ticket } from './broker-admission';
import { BrokerConfigError, BrokerCredentials, readCredentials } from './broker-credentials';
import { DEFAULT_BROKER_LIMITS, type BrokerLimits, type BrokerOptions } from './broker-options';
import { ExpiringIds } from './expiring-ids';
import { parseHostControl } from './host-control';
import {
  decodeHostFrame,
  encodeHostFrame,
  FLAG_CLOSE,
  FLAG_DATA,
  HEADER_SIZE,
  MAX_CONTROL,
  MAX_FRAME,
  newId,
  parseRegister,
  REACH_PROTOCOL,
  sameDigest,
  tokenSha256,
  type Register,
} from './protocol';

/** How long the connection id of a matched registration is refused as a replay. */
const REPLAY_MS = 86_400_000;

/** The broker uses the socket guard for its keepalive only: it bounds its queues per stream (`queueBytes`) and paces nothing. */
const UNPACED = Number.MAX_SAFE_INTEGER;

type HostConn = { ws: WebSocket; hostId: string; connectionId: string; streams: Map<string, Stream> };
type Stream = { id: string; host: HostConn; client: WebSocket; digest: string; idle: NodeJS.Timeout | null };

/**
 * The Reach broker (`svc reach`): a rendezvous on a public address. Hosts (relays) hold one control
 * socket each, registered with their host token (the broker knows only its digest); phones connect with
 * a bootstrap credential (from a pairing QR, one use) or a route credential (from `auth.ok`, up to
 * `streamsPerRoute` streams at once: one per connection the phone opens), both published by the host as
 * digests. Matched, the broker copies opaque bytes between the phone and the host's stream: the Secure
 * Link TLS session inside is end to end, so the broker holds no key that could read it. Public listeners
 * must use TLS; plain text only on loopback. What a stranger can make it hold is bounded: nothing of a
 * registration is kept before its credential matches, and refused ones are counted (`BrokerAdmission`).
 */
export class ReachBroker {
  private server: http.Server | https.Server | null = null;
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME + HEADER_SIZE, perMessageDeflate: false });
  private readonly hosts = new Map<string, HostConn>();
  private readonly credentials: BrokerCredentials;
  private readonly activeRoutes = new Map<string, number>();
  private readonly seenConnections: ExpiringIds;
  private readonly admission: BrokerAdmission;
  private readonly limits: BrokerLimits;
  private readonly clock: Clock;
  private hostDigests: Map<string, string>;
  private streams = 0;
  /** A host or phone that vanished without a FIN is dropped within two ping intervals, not at the TCP timeout (a dead host kept its id busy). */
  private readonly guards: SocketGuards;

  constructor(private readonly opts: BrokerOptions) {
    this.limits = { ...DEFAULT_BROKER_LIMITS, ...opts.limits };
    this.clock = opts.clock ?? new SystemClock();
    this.seenConnections = new ExpiringIds(this.limits.replayIds);
    this.admission = new BrokerAdmission(this.limits);
    this.guards = new SocketGuards(
      {
        bufferBytes: this.limits.queueBytes,
        queuedFrames: UNPACED,
        framesPerSecond: UNPACED,
        frameBurst: UNPACED,
        pingIntervalMs: this.limits.pingIntervalMs,
      },
      opts.logger,
      'reach-broker',
    );
    if (!opts.tls && !isLoopbackHost(opts.listen))
      throw new BrokerConfigError(
        `a public listener needs TLS (--tls-cert and --tls-key); plain text is allowed only on loopback, not on ${opts.listen}`,
      );
    this.hostDigests = readCredentials(opts.credentialsFile);
    this.credentials = new BrokerCredentials(opts.stateFile, this.limits.credentialsPerHost, this.limits.replayIds, () => this.now());
    this.credentials.load(this.hostDigests);
  }

  get port(): number {
    return (this.server?.address() as net.AddressInfo | null)?.port ?? 0;
  }

  get url(): string {
    return `${this.opts.tls ? 'wss' : 'ws'}://${this.opts.listen.includes(':') ? `[${this.opts.listen}]` : this.opts.listen}:${this.port}/v1/connect`;
  }

  stats() {
    return { hosts_online: this.hosts.size, active_streams: this.streams };
  }

  /** How much the broker holds for registrations it has seen (every one bounded by a limit). */
  stores() {
    return { replayIds: this.seenConnections.size, consumedBootstraps: this.credentials.consumedCount, ...this.admission.sizes() };
  }

  async start(): Promise<void> {
    const handler = (req: http.IncomingMessage, res: http.ServerResponse) => this.onRequest(req, res);
    const server = this.opts.tls
      ? https.createServer({ cert: fs.readFileSync(this.opts.tls.cert), key: fs.readFileSync(this.opts.tls.key), ...TLS_LISTENER_OPTIONS }, handler)
      : http.createServer(handler);
    server.headersTimeout = 10_000;
    server.on('upgrade', (req, socket, head) => this.onUpgrade(req, socket as net.Socket, head));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.opts.port, this.opts.listen, () => resolve());
    });
    this.server = server;
    this.opts.logger.info({ url: this.url, hosts: this.hostDigests.size }, 'reach broker listening');
  }

  async close(): Promise<void> {
    this.guards.stop();
    for (const h of this.hosts.values()) h.ws.close(1001, 'broker stopping');
    for (const c of this.wss.clients) c.terminate();
    const s = this.server;
    this.server = null;
    if (s) await new Promise<void>((r) => s.close(() => r()));
  }

  /** Re-reads the credentials file (SIGHUP): hosts no longer listed are dropped. */
  reloadCredentials(): void {
    this.hostDigests = readCredentials(this.opts.credentialsFile);
    for (const [id, h] of this.hosts) if (!this.hostDigests.has(id)) h.ws.close(1008, 'host removed');
  }

  private onRequest(req: http.IncomingMessage, res: http.ServerResponse): void {
    const p = (req.url ?? '/').split('?')[0];
    const send = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    if (p === '/health' && (req.method === 'GET' || req.method === 'HEAD'))
      return send(200, { ok: true, service: 'svc_reach', protocol_version: REACH_PROTOCOL, ...this.stats() });
    if (p === '/v1/connect') return send(426, { ok: false, error: 'this is a WebSocket endpoint', code: 'upgrade_required' });
    send(404, { ok: false, error: 'not found', code: 'not_found' });
  }

  private onUpgrade(req: http.IncomingMessage, socket: net.Socket, head: Buffer): void {
    const refuse = (status: number, error: string, retryAfterS?: number) => {
      const text = JSON.stringify({ ok: false, error, code: status === 429 ? 'rate_limited' : 'bad_request' });
      const retry = retryAfterS === undefined ? '' : `retry-after: ${retryAfterS}\r\n`;
      socket.end(
        `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n${retry}connection: close\r\n\r\n${text}`,
      );
    };
    const [p, query] = (req.url ?? '/').split('?');
    if (p !== '/v1/connect') return refuse(404, 'not found');
    if (query !== undefined || req.headers.authorization) return refuse(400, 'credentials must be sent in registration');
    const peer = socket.remoteAddress ?? 'unknown';
    const admitted = this.admission.admit(peer, this.now());
    if (!admitted.ok) {
      this.opts.logger.debug({ peer, why: admitted.why }, 'reach upgrade refused: too many refused registrations');
      return refuse(429, 'too many refused registrations; try again later', admitted.retryAfterS);
    }
    const ticket = admitted.ticket;
    // However the connection ends without a match (a malformed handshake never becomes a WebSocket, a socket
    // closes before its registration) it counts as refused: otherwise it would stay in flight for good.
    socket.once('close', () => this.admission.settle(ticket, 'refused', this.now()));
    this.wss.handleUpgrade(req, socket, head, (ws) => this.onSocket(ws, peer, ticket));
  }

  /** A registration refused: `unauthorized`, `unsupported_version`, `replayed`, `expired` (counted by the admission). */
  private refuseRegistration(ws: WebSocket, code: string, why: string, peer: string): Outcome {
    this.error(ws, code, why, peer);
    return 'refused';
  }

  /** The credential matched, but there is no room (`host_busy`, `host_offline`, `too_many_streams`): not counted against the source. */
  private busy(ws: WebSocket, code: string, why: string, peer: string): Outcome {
    this.error(ws, code, why, peer);
    return 'matched';
  }

  private error(ws: WebSocket, code: string, why: string, peer: string): void {
    this.opts.logger.info({ peer, code, why }, 'reach connection refused');
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ type: 'error', protocol_version: REACH_PROTOCOL, code }));
    ws.close(1008, code);
  }

  private onSocket(ws: WebSocket, peer: string, ticket: Ticket): void {
    this.guards.watch(ws, { describe: () => ({ peer }) });
    const settle = (outcome: Outcome) => this.admission.settle(ticket, outcome, this.now());
    const timer = setTimeout(() => settle(this.refuseRegistration(ws, 'unauthorized', 'no registration in time', peer)), this.limits.registerMs);
    ws.once('message', (data, isBinary) => {
      clearTimeout(timer);
      settle(this.register(ws, data, isBinary, peer));
    });
    ws.once('close', () => clearTimeout(timer));
    ws.on('error', () => ws.terminate());
  }

  /** The first frame: nothing of a registration is kept unless its credential matched. */
  private register(ws: WebSocket, data: RawData, isBinary: boolean, peer: string): Outcome {
    const text = data.toString();
    if (isBinary || text.length > MAX_CONTROL) return this.refuseRegistration(ws, 'unauthorized', 'first frame is not a registration', peer);
    const reg = parseRegister(text);
    if (!reg.ok) return this.refuseRegistration(ws, reg.code, reg.why, peer);
    this.pruneReplay();
    if (this.seenConnections.has(reg.value.connection_id)) return this.refuseRegistration(ws, 'replayed', 'connection id seen before', peer);
    return reg.value.role === 'host' ? this.onHost(ws, reg.value, peer) : this.onClient(ws, reg.value, peer);
  }

  private remember(connectionId: string): void {
    this.seenConnections.add(connectionId, this.now() + REPLAY_MS);
  }

  // ---- hosts -----------------------------------------------------------------------------------

  private onHost(ws: WebSocket, reg: Register, peer: string): Outcome {
    const expected = this.hostDigests.get(reg.host_id);
    if (reg.credential_kind !== 'host' || !expected || !sameDigest(expected, tokenSha256(reg.token)))
      return this.refuseRegistration(ws, 'unauthorized', 'host credential', peer);
    if (this.hosts.has(reg.host_id) || this.hosts.size >= this.limits.hosts)
      return this.busy(ws, 'host_busy', 'host already online or too many hosts', peer);
    this.remember(reg.connection_id);
    const host: HostConn = { ws, hostId: reg.host_id, connectionId: reg.connection_id, streams: new Map() };
    this.hosts.set(reg.host_id, host);
    ws.send(JSON.stringify({ type: 'registered', protocol_version: REACH_PROTOCOL }));
    this.opts.logger.info({ host: reg.host_id, peer }, 'reach host online');
    ws.on('message', (data, isBinary) => (isBinary ? this.hostData(host, toBuffer(data)) : this.hostControl(host, data.toString(), peer)));
    ws.on('close', () => {
      if (this.hosts.get(reg.host_id) === host) this.hosts.delete(reg.host_id);
      for (const s of [...host.streams.values()]) this.closeStream(s, false);
      this.opts.logger.info({ host: reg.host_id }, 'reach host offline');
    });
    return 'matched';
  }

  private hostControl(host: HostConn, text: string, peer: string): void {
    // Validated before any field is read: a host sending `null` must cost only its own connection.
    const m = parseJsonObject(text);
    if (m === null) return this.error(host.ws, 'unauthorized', 'control frame is not a JSON object', peer);
    const parsed = parseHostControl(m, this.now());
    if (!parsed.ok) return this.error(host.ws, parsed.code, parsed.why, peer);
    const c = parsed.value;
    const ack = (type: string, kind: string, id: Record<string, string>) =>
      void host.ws.send(JSON.stringify({ type, protocol_version: REACH_PROTOCOL, credential_kind: kind, ...id }));
    switch (c.type) {
      case 'publish_bootstrap':
        if (!this.credentials.roomFor(host.hostId)) return this.error(host.ws, 'quota_exceeded', 'credentials per host', peer);
        this.credentials.publish(c.tokenSha256, {
          hostId: host.hostId,
          kind: 'bootstrap',
          id: c.pairingId,
          expiresAt: c.expiresAt,
          usesLeft: 1,
          deviceIdHash: null,
        });
        return ack('published', 'bootstrap', { pairing_id: c.pairingId });
      case 'publish_route':
        // A route credential replaces the one of the same id (a new token for the same session).
        this.credentials.dropRoute(host.hostId, c.credentialId);
        if (!this.credentials.roomFor(host.hostId)) return this.error(host.ws, 'quota_exceeded', 'credentials per host', peer);
        this.credentials.publish(c.tokenSha256, {
          hostId: host.hostId,
          kind: 'route',
          id: c.credentialId,
          expiresAt: c.expiresAt,
          usesLeft: Number.MAX_SAFE_INTEGER,
          deviceIdHash: c.deviceIdHash.slice(0, 64),
        });
        return ack('published', 'route', { credential_id: c.credentialId });
      case 'revoke':
        for (const d of this.credentials.dropRoute(host.hostId, c.credentialId))
          for (const s of [...host.streams.values()]) if (s.digest === d) this.closeStream(s, true);
        this.credentials.save();
        return ack('revoked', 'route', { credential_id: c.credentialId });
    }
  }

  private hostData(host: HostConn, frame: Buffer): void {
    const f = decodeHostFrame(frame);
    if (!f) return this.error(host.ws, 'unauthorized', 'bad host frame', 'host');
    const s = host.streams.get(f.streamId);
    if (!s) return;
    if (f.flags === FLAG_CLOSE) return this.closeStream(s, false);
    this.touch(s);
    this.opts.onForward?.('to_client', f.payload);
    if (s.client.bufferedAmount > this.limits.queueBytes) return this.closeStream(s, true);
    s.client.send(f.payload, { binary: true });
  }

  // ---- clients ---------------------------------------------------------------------------------

  private onClient(ws: WebSocket, reg: Register, peer: string): Outcome {
    const digest = tokenSha256(reg.token);
    const c = this.credentials.get(digest);
    const host = this.hosts.get(reg.host_id);
    const why = `client for host ${reg.host_id}`;
    if (this.credentials.isConsumed(digest)) return this.refuseRegistration(ws, 'replayed', why, peer);
    if (!c || c.hostId !== reg.host_id || c.kind !== reg.credential_kind) return this.refuseRegistration(ws, 'unauthorized', why, peer);
    if (c.expiresAt <= this.now()) return this.refuseRegistration(ws, 'expired', why, peer);
    if (c.usesLeft <= 0) return this.refuseRegistration(ws, 'replayed', why, peer);
    // The credential matched: what follows is the broker's or the host's state, not the caller's fault.
    if (c.kind === 'route' && (this.activeRoutes.get(digest) ?? 0) >= this.limits.streamsPerRoute)
      return this.busy(ws, 'too_many_streams', why, peer);
    if (!host) return this.busy(ws, 'host_offline', why, peer);
    if (host.streams.size >= this.limits.streamsPerHost) return this.busy(ws, 'host_busy', why, peer);
    const cred = c;
    this.credentials.use(digest, cred);
    this.remember(reg.connection_id);
    const s: Stream = { id: newId(), host: host, client: ws, digest, idle: null };
    host.streams.set(s.id, s);
    this.activeRoutes.set(digest, (this.activeRoutes.get(digest) ?? 0) + 1);
    this.streams++;
    this.touch(s);
    // The credential the client matched with (for the host's per-phone rate limits); hosts that do not read it ignore it.
    host.ws.send(
      JSON.stringify({
        type: 'open',
        protocol_version: REACH_PROTOCOL,
        stream_id: s.id,
        host_connection_id: host.connectionId,
        credential_kind: cred.kind,
        credential_id: cred.id,
      }),
    );
    ws.send(JSON.stringify({ type: 'matched', protocol_version: REACH_PROTOCOL, stream_id: s.id }));
    this.opts.logger.info({ host: reg.host_id, stream: s.id, kind: cred.kind, peer }, 'reach stream open');
    ws.on('message', (data, isBinary) => {
      if (!isBinary) return this.error(ws, 'unauthorized', 'text after match', peer);
      const bytes = toBuffer(data);
      if (bytes.length === 0 || bytes.length > MAX_FRAME) return this.closeStream(s, true);
      this.touch(s);
      this.opts.onForward?.('to_host', bytes);
      if (s.host.ws.bufferedAmount > this.limits.queueBytes) return this.closeStream(s, true);
      s.host.ws.send(encodeHostFrame(FLAG_DATA, s.id, bytes), { binary: true });
    });
    ws.on('close', () => this.closeStream(s, true));
    return 'matched';
  }

  private touch(s: Stream): void {
    if (s.idle) clearTimeout(s.idle);
    s.idle = setTimeout(() => this.closeStream(s, true), this.limits.idleMs);
    s.idle.unref();
  }

  private closeStream(s: Stream, notifyHost: boolean): void {
    if (s.host.streams.get(s.id) !== s) return;
    s.host.streams.delete(s.id);
    this.streams--;
    if (s.idle) clearTimeout(s.idle);
    const n = (this.activeRoutes.get(s.digest) ?? 1) - 1;
    if (n <= 0) this.activeRoutes.delete(s.digest);
    else this.activeRoutes.set(s.digest, n);
    if (notifyHost && s.host.ws.readyState === s.host.ws.OPEN) s.host.ws.send(encodeHostFrame(FLAG_CLOSE, s.id), { binary: true });
    if (s.client.readyState === s.client.OPEN) s.client.close(1000, 'stream closed');
  }

  private now(): number {
    return this.clock.now().getTime();
  }

  private pruneReplay(): void {
    const now = this.now();
    this.seenConnections.prune(now);
    this.credentials.pruneConsumed(now);
  }
}

function toBuffer(data: RawData): Buffer {
  return Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
}
