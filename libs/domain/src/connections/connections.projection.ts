import { eventAtMs } from '../event-time';
import type { Projection, StoredEvent, StoredRelayEvent } from '@svc/events';

export type Connection = { connId: string; tokenPrefix: string; deviceId: string; ip: string; path: string; since: number };

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
