import { eventAtMs } from '../event-time';
import type { DeepReadonly } from '../deep-readonly';
import type { ClientSupports, Projection, StoredEvent, StoredRelayEvent } from '@svc/events';

type MutableConnection = {
  connId: string;
  tokenPrefix: string;
  deviceId: string;
  ip: string;
  path: string;
  since: number;
  supports?: ClientSupports;
};

/** An open phone socket, read-only outside this projection. `supports`: what the client advertised in its `system/auth` (absent: nothing). */
export type Connection = DeepReadonly<MutableConnection>;

type State = { connections: MutableConnection[]; offline?: Array<[string, number]> };

/**
 * Phone sockets open right now, and when each session's phone last went offline. The sockets are
 * ephemeral: `relay.started` empties them (no socket survives a restart), and a phone still connected
 * when the relay stopped counts as offline from that start on (its disconnect may not have been written).
 */
export class ConnectionsProjection implements Projection<State> {
  private readonly byId = new Map<string, MutableConnection>();
  /** Token prefix → its open sockets: whether a phone is online is one lookup, not a walk over every socket. */
  private readonly byPrefix = new Map<string, Map<string, MutableConnection>>();
  /** Token prefix → event time its last socket closed; gone while it is online or once the session ends. */
  private readonly offline = new Map<string, number>();

  apply(stored: StoredEvent): void {
    const e = stored as StoredRelayEvent;
    switch (e.type) {
      case 'relay.started': {
        const at = eventAtMs(e);
        for (const c of this.byId.values()) this.offline.set(c.tokenPrefix, at);
        this.byId.clear();
        this.byPrefix.clear();
        break;
      }
      case 'phone.connected':
        this.add({ ...e.data, since: eventAtMs(e) });
        this.offline.delete(e.data.tokenPrefix);
        break;
      case 'phone.disconnected': {
        const c = this.byId.get(e.data.connId);
        if (!c) break;
        this.byId.delete(c.connId);
        const mine = this.byPrefix.get(c.tokenPrefix);
        mine?.delete(c.connId);
        if (mine?.size === 0) this.byPrefix.delete(c.tokenPrefix);
        if (!this.isOnline(e.data.tokenPrefix)) this.offline.set(e.data.tokenPrefix, eventAtMs(e));
        break;
      }
      case 'session.revoked':
      case 'session.expired':
        this.offline.delete(e.data.tokenPrefix);
        break;
      default:
        break;
    }
  }

  /** When the session's phone went offline (its last socket closed), or null: online, or never connected. */
  offlineSince(tokenPrefix: string): number | null {
    return this.isOnline(tokenPrefix) ? null : (this.offline.get(tokenPrefix) ?? null);
  }

  all(): readonly Connection[] {
    return [...this.byId.values()];
  }

  count(): number {
    return this.byId.size;
  }

  /**
   * What the session's newest open socket advertised in `system/auth` `supports` (`{}` when offline or
   * nothing was sent). For features that negotiate with the client (e.g. phone-side confirmation).
   */
  supportsOf(tokenPrefix: string): Readonly<ClientSupports> {
    let newest: Connection | undefined;
    for (const c of this.byPrefix.get(tokenPrefix)?.values() ?? []) if (!newest || c.since >= newest.since) newest = c;
    return newest?.supports ?? {};
  }

  isOnline(tokenPrefix: string): boolean {
    return this.byPrefix.has(tokenPrefix);
  }

  private add(c: MutableConnection): void {
    // A connId seen again (never in practice: they are UUIDs) replaces the old socket in both maps.
    const old = this.byId.get(c.connId);
    if (old) this.byPrefix.get(old.tokenPrefix)?.delete(old.connId);
    if (old && this.byPrefix.get(old.tokenPrefix)?.size === 0) this.byPrefix.delete(old.tokenPrefix);
    this.byId.set(c.connId, c);
    let mine = this.byPrefix.get(c.tokenPrefix);
    if (!mine) this.byPrefix.set(c.tokenPrefix, (mine = new Map()));
    mine.set(c.connId, c);
  }

  snapshot(): State {
    return { connections: [...this.byId.values()], offline: [...this.offline.entries()] };
  }

  restore(state: State): void {
    this.byId.clear();
    this.byPrefix.clear();
    this.offline.clear();
    for (const c of state.connections) this.add(c);
    for (const [prefix, at] of state.offline ?? []) this.offline.set(prefix, at);
  }
}
