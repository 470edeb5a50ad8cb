import { randomUUID } from 'node:crypto';
import { rateLimitSubject, type Principal } from '@svc/domain';
import type { ClientSupports } from '@svc/events';
import type { WebSocket } from 'ws';
import type { GuardHooks, SocketCut, SocketGuard, SocketGuards } from '../common/sockets/socket-guard';
import { CLOSE } from './envelope';

/** Channels whose errors are reported on the channel itself (`terminal.error`, `bridge.error`, ...). */
const ERROR_CHANNELS: ReadonlySet<string> = new Set(['chat', 'terminal', 'tui', 'bridge', 'notifications', 'proactive', 'desktop']);

/** One phone socket. `principal` is set once `system/auth` succeeded. */
export class PhoneConnection implements GuardHooks {
  readonly id = randomUUID();
  principal: (Principal & { kind: 'device' }) | null = null;
  /** What the client advertised in `system/auth` `supports` (also on the `connections` read model). */
  supports: ClientSupports = {};
  /** Until `system/auth` succeeds: the deadline that closes the socket (cleared once authenticated). */
  authTimer: NodeJS.Timeout | undefined;
  /** Its bounds: output checked before each frame, frames handled in arrival order and paced, pings answered. */
  readonly guard: SocketGuard;
  closed = false;
  /** Its `system/auth` frame is being handled (a pairing may be being written): never dropped to make room. */
  authenticating = false;
  /** It came through Secure Link (directly or over Reach): the only sockets offered a Reach route credential. */
  viaSecureLink = false;
  /** The address as the caps and the rate limiter count it (IPv6 per /64). */
  readonly subject: string;

  constructor(
    readonly ws: WebSocket,
    readonly ip: string,
    readonly path: string,
    guards: SocketGuards,
  ) {
    this.subject = rateLimitSubject(ip);
    // Its own hooks (below), not closures: an idle socket is mostly what it holds (issue 12, bench/footprint.js).
    this.guard = guards.watch(ws, this);
  }

  /** A close the guard makes is the relay's: recorded with its code and reason, like any other it sends. */
  onCut(cut: SocketCut): void {
    this.closed = true;
    this.sentClose = { code: cut.code, reason: cut.reason };
  }

  describe(): Record<string, unknown> {
    return { conn: this.id, tokenPrefix: this.tokenPrefix };
  }

  get tokenPrefix(): string | null {
    return this.principal?.tokenPrefix ?? null;
  }

  /**
   * `topLevel`: envelope fields beside `payload` (the app reads `profiles.updated`'s array there). `written`
   * runs once the frame is written to the socket (with an error if it never is); not when this returns false.
   */
  send(
    channel: string,
    type: string,
    payload: Record<string, unknown>,
    id?: string,
    topLevel?: Record<string, unknown>,
    written?: (err?: Error) => void,
  ): boolean {
    if (this.ws.readyState !== this.ws.OPEN || !this.guard.mayQueue()) return false;
    this.ws.send(JSON.stringify({ channel, type, id: id ?? randomUUID(), payload, ...topLevel }), written);
    return true;
  }

  /**
   * An error answering a frame. Clients only listen on the channel they use (a `system/error` is ignored
   * and the request hangs), so an error about a channel's frame goes out on that channel as
   * `<channel>.error`; `system/error` is kept for frames no channel applies to (bad JSON, unknown channel).
   */
  error(message: string, code: string, extra: Record<string, unknown> = {}, id?: string): void {
    const ch = extra.channel;
    if (typeof ch === 'string' && ERROR_CHANNELS.has(ch)) this.send(ch, `${ch}.error`, { message, code, ...extra }, id);
    else this.send('system', 'error', { message, code, ...extra }, id);
  }

  /**
   * The close the relay started, if it did: what the log records, since a peer that does not answer the
   * closing handshake (a phone off the network, a relay stopping) makes `ws` report 1006 instead.
   */
  sentClose: { code: number; reason: string } | null = null;

  /** `system/auth` did not admit this socket: say why, then close it (4401). */
  failAuth(reason: string, code = 'invalid_credentials', extra: Record<string, unknown> = {}): void {
    this.send('system', 'auth.fail', { reason, code, ...extra });
    this.close(CLOSE.authFailed, 'auth failed');
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.sentClose = { code, reason };
    this.ws.close(code, reason);
  }
}
