import { eventAtMs } from '../event-time';
import type { ClientSupports, Projection, StoredEvent, StoredRelayEvent } from '@svc/events';

/** `supports`: what the client advertised in this socket's `system/auth` (absent: nothing). */
export type Connection = {
  connId: string;
  tokenPrefix: string;
  deviceId: string;
  ip: string;
  path: string;
  since: number;
  supports?: ClientSupports;
};

/** Phone sockets open right now. Ephemeral: `relay.started` empties it (no socket survives a restart). */
export class ConnectionsProjection implements Projection<{ connections: Connection[] }> {
  private readonly byId = new Map<string, Connection>();

  apply(stored: StoredEvent): void {
    const e = stored as StoredRelayEvent;
    switch (e.type) {
      case 'relay.started':
        this.byId.clear();
        break;
      case 'phone.connected':
        this.byId.set(e.data.connId, { ...e.data, since: eventAtMs(e) });
        break;
      case 'phone.disconnected':
        this.byId.delete(e.data.connId);
        break;
      default:
        break;
    }
  }

  all(): Connection[] {
    return [...this.byId.values()];
  }

  count(): number {
    return this.byId.size;
  }

  /**
   * What the session's newest open socket advertised in `system/auth` `supports` (`{}` when offline or
   * nothing was sent). For features that negotiate with the client (e.g. phone-side confirmation).
   */
  supportsOf(tokenPrefix: string): ClientSupports {
    let newest: Connection | undefined;
    for (const c of this.byId.values()) if (c.tokenPrefix === tokenPrefix && (!newest || c.since >= newest.since)) newest = c;
    return newest?.supports ?? {};
  }

  isOnline(tokenPrefix: string): boolean {
    for (const c of this.byId.values()) if (c.tokenPrefix === tokenPrefix) return true;
    return false;
  }

  snapshot(): { connections: Connection[] } {
    return { connections: this.all() };
  }

  restore(state: { connections: Connection[] }): void {
    this.byId.clear();
    for (const c of state.connections) this.byId.set(c.connId, c);
  }
}
