import { randomUUID } from 'node:crypto';
import type { Principal } from '@svc/domain';
import type { ClientSupports } from '@svc/events';
import type { WebSocket } from 'ws';

/** One phone socket. `principal` is set once `system/auth` succeeded. */
export class PhoneConnection {
  readonly id = randomUUID();
  principal: (Principal & { kind: 'device' }) | null = null;
  /** What the client advertised in `system/auth` `supports` (also on the `connections` read model). */
  supports: ClientSupports = {};
  /** Frames are handled one after another, in arrival order. */
  queue: Promise<void> = Promise.resolve();
  closed = false;
  /** Cleared when a protocol ping goes out, set by the pong (or any frame): a dead peer misses one. */
  alive = true;

  constructor(
    readonly ws: WebSocket,
    readonly ip: string,
    readonly path: string,
  ) {}

  get tokenPrefix(): string | null {
    return this.principal?.tokenPrefix ?? null;
  }

  send(channel: string, type: string, payload: Record<string, unknown>, id?: string): boolean {
    if (this.ws.readyState !== this.ws.OPEN) return false;
    this.ws.send(JSON.stringify({ channel, type, id: id ?? randomUUID(), payload }));
    return true;
  }

  error(message: string, code: string, extra: Record<string, unknown> = {}, id?: string): void {
    this.send('system', 'error', { message, code, ...extra }, id);
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.ws.close(code, reason);
  }
}
