import { epoch, isoMs } from '../epoch';
import { eventAtMs } from '../event-time';
import type { DeepReadonly } from '../deep-readonly';
import type { GrantExpiries, Projection, StoredEvent, StoredRelayEvent } from '@svc/events';

/** A paired device as the projection keeps it; everyone else reads it as a `Session`. */
type MutableSession = {
  tokenPrefix: string;
  tokenDigest: string;
  deviceId: string;
  deviceName: string;
  deviceModel: string | null;
  devicePlatform: string | null;
  deviceHostname: string | null;
  clientSurface: string | null;
  deviceFormFactor: string | null;
  transportHint: string | null;
  createdAt: number;
  lastSeen: number;
  /** Epoch ms; null never expires. */
  expiresAt: number | null;
  /** Channel -> epoch ms (null never). A channel absent here is not granted. */
  grants: Record<string, number | null>;
};

/** A paired device: read-only outside this projection (its events change it, nothing else). */
export type Session = DeepReadonly<MutableSession>;

type State = { sessions: MutableSession[] };

const toMs = (iso: string | null): number | null => (iso === null ? null : isoMs(iso));

export function grantsToMs(grants: GrantExpiries): Record<string, number | null> {
  const out: Record<string, number | null> = {};
  for (const [k, v] of Object.entries(grants)) out[k] = toMs(v);
  return out;
}

/** Paired devices. Revoked and expired sessions leave the model, so their tokens can never match. */
export class SessionsProjection implements Projection<State> {
  private readonly byPrefix = new Map<string, MutableSession>();
  private readonly byDigest = new Map<string, MutableSession>();

  apply(stored: StoredEvent): void {
    const e = stored as StoredRelayEvent;
    switch (e.type) {
      case 'session.created': {
        const at = eventAtMs(e);
        const s: MutableSession = {
          tokenPrefix: e.data.tokenPrefix,
          tokenDigest: e.data.tokenDigest,
          deviceId: e.data.deviceId,
          deviceName: e.data.deviceName,
          deviceModel: e.data.deviceModel,
          devicePlatform: e.data.devicePlatform,
          deviceHostname: e.data.deviceHostname ?? null,
          clientSurface: e.data.clientSurface ?? null,
          deviceFormFactor: e.data.deviceFormFactor ?? null,
          transportHint: e.data.transportHint,
          createdAt: at,
          lastSeen: at,
          expiresAt: toMs(e.data.expiresAt),
          grants: grantsToMs(e.data.grants),
        };
        this.byPrefix.set(s.tokenPrefix, s);
        this.byDigest.set(s.tokenDigest, s);
        break;
      }
      case 'session.shortened': {
        const s = this.byPrefix.get(e.data.tokenPrefix);
        if (s) {
          s.expiresAt = toMs(e.data.expiresAt);
          s.grants = grantsToMs(e.data.grants);
        }
        break;
      }
      case 'session.device_updated': {
        const s = this.byPrefix.get(e.data.tokenPrefix);
        if (s) {
          const { tokenPrefix: _, ...fields } = e.data;
          Object.assign(s, fields);
        }
        break;
      }
      case 'session.grant_expired': {
        const s = this.byPrefix.get(e.data.tokenPrefix);
        if (s) delete s.grants[e.data.channel];
        break;
      }
      case 'session.revoked':
      case 'session.expired': {
        const s = this.byPrefix.get(e.data.tokenPrefix);
        if (s) {
          this.byPrefix.delete(s.tokenPrefix);
          this.byDigest.delete(s.tokenDigest);
        }
        break;
      }
      case 'session.seen':
      case 'phone.connected': {
        const s = this.byPrefix.get(e.data.tokenPrefix);
        if (s) s.lastSeen = Math.max(s.lastSeen, eventAtMs(e));
        break;
      }
      default:
        break;
    }
  }

  /** The session a token digest belongs to, if it is still valid at `now`. */
  byToken(tokenDigest: string, now: Date): Session | undefined {
    const s = this.byDigest.get(tokenDigest);
    return s && isLive(s, now) ? s : undefined;
  }

  byTokenPrefix(prefix: string): Session | undefined {
    return this.byPrefix.get(prefix);
  }

  /** Live sessions whose token prefix starts with `prefix`. */
  matching(prefix: string, now: Date): readonly Session[] {
    const out: Session[] = [];
    for (const s of this.byPrefix.values()) if (s.tokenPrefix.startsWith(prefix) && isLive(s, now)) out.push(s);
    return out;
  }

  active(now: Date): readonly Session[] {
    return [...this.byPrefix.values()].filter((s) => isLive(s, now));
  }

  /** Sessions past their expiry whose `session.expired` event is not written yet. */
  overdue(now: Date): readonly Session[] {
    return [...this.byPrefix.values()].filter((s) => !isLive(s, now));
  }

  count(now: Date): number {
    let n = 0;
    for (const s of this.byPrefix.values()) if (isLive(s, now)) n++;
    return n;
  }

  snapshot(): State {
    return { sessions: [...this.byPrefix.values()].map((s) => ({ ...s, grants: { ...s.grants } })) };
  }

  restore(state: State): void {
    this.byPrefix.clear();
    this.byDigest.clear();
    for (const s of state.sessions) {
      // A snapshot from before these fields existed: its events had none of them either (replay gives null).
      s.deviceHostname ??= null;
      s.clientSurface ??= null;
      s.deviceFormFactor ??= null;
      this.byPrefix.set(s.tokenPrefix, s);
      this.byDigest.set(s.tokenDigest, s);
    }
  }
}

/** An expiry in epoch ms (null: never) still holds at `now` while it lies after it: at the instant itself it has passed. */
export function liveAt(until: number | null, now: Date): boolean {
  return until === null || until > now.getTime();
}

export function isLive(s: Session, now: Date): boolean {
  return liveAt(s.expiresAt, now);
}

/** True when the session holds `channel` and that grant has not expired at `now`. */
export function hasGrant(s: Session, channel: string, now: Date): boolean {
  return channel in s.grants && liveAt(s.grants[channel], now);
}

/**
 * The grants of a session that are live at `now` (channel -> epoch ms, null: as long as the session): what
 * `GET /sessions`, `auth.ok` and a shortening start from. An expired grant stays in the model until the
 * sweep's `session.grant_expired`, so every reader filters by this one rule.
 */
export function liveGrants(s: Pick<Session, 'grants'>, now: Date): Record<string, number | null> {
  const out: Record<string, number | null> = {};
  for (const [channel, until] of Object.entries(s.grants)) if (liveAt(until, now)) out[channel] = until;
  return out;
}

/** The live grants as the wire writes them (WIRE.md: epoch seconds, null as long as the session): `GET /sessions` and `auth.ok`. */
export function wireLiveGrants(s: Pick<Session, 'grants'>, now: Date): Record<string, number | null> {
  const out: Record<string, number | null> = {};
  for (const [channel, until] of Object.entries(liveGrants(s, now))) out[channel] = epoch(until);
  return out;
}
