import { isoMs } from '../epoch';
import { eventAtMs } from '../event-time';
import type { DeepReadonly } from '../deep-readonly';
import type { PairingTerms, Projection, StoredEvent, StoredRelayEvent } from '@svc/events';

type MutablePairingCode = {
  codeDigest: string;
  /** `pending`: a public request waiting for the operator; `ready`: usable by a phone. */
  state: 'ready' | 'pending';
  source: 'register' | 'mint' | 'env' | 'public';
  registeredAt: number;
  expiresAt: number;
  terms: PairingTerms | null;
  requestId: string | null;
  ip: string | null;
  deviceName: string | null;
};

/** A live pairing code, read-only outside this projection. */
export type PairingCode = DeepReadonly<MutablePairingCode>;

type State = { codes: MutablePairingCode[] };

/** Live codes only: a consumed, expired or denied code is gone, so it can never match again. */
export class PairingProjection implements Projection<State> {
  private readonly byDigest = new Map<string, MutablePairingCode>();

  apply(stored: StoredEvent): void {
    const e = stored as StoredRelayEvent;
    switch (e.type) {
      case 'pairing.code_registered':
        this.byDigest.set(e.data.codeDigest, {
          codeDigest: e.data.codeDigest,
          state: 'ready',
          source: e.data.source,
          registeredAt: eventAtMs(e),
          expiresAt: isoMs(e.data.expiresAt),
          terms: e.data.terms,
          requestId: null,
          ip: null,
          deviceName: null,
        });
        break;
      case 'pairing.requested':
        this.byDigest.set(e.data.codeDigest, {
          codeDigest: e.data.codeDigest,
          state: 'pending',
          source: 'public',
          registeredAt: eventAtMs(e),
          expiresAt: isoMs(e.data.expiresAt),
          terms: null,
          requestId: e.data.requestId,
          ip: e.data.ip,
          deviceName: e.data.deviceName,
        });
        break;
      case 'pairing.approved': {
        const code = this.byDigest.get(e.data.codeDigest);
        if (code) this.byDigest.set(code.codeDigest, { ...code, state: 'ready', terms: e.data.terms });
        break;
      }
      case 'pairing.denied':
      case 'pairing.code_consumed':
      case 'pairing.code_expired':
        this.byDigest.delete(e.data.codeDigest);
        break;
      default:
        break;
    }
  }

  get(codeDigest: string): PairingCode | undefined {
    return this.byDigest.get(codeDigest);
  }

  byRequestId(requestId: string): PairingCode | undefined {
    for (const c of this.byDigest.values()) if (c.requestId === requestId) return c;
    return undefined;
  }

  /** Codes not yet past their expiry at `now`, oldest first. */
  live(now: Date): readonly PairingCode[] {
    const t = now.getTime();
    return [...this.byDigest.values()].filter((c) => c.expiresAt > t);
  }

  /** Codes whose expiry has passed but whose `code_expired` event is not written yet. */
  overdue(now: Date): readonly PairingCode[] {
    const t = now.getTime();
    return [...this.byDigest.values()].filter((c) => c.expiresAt <= t);
  }

  snapshot(): State {
    return { codes: [...this.byDigest.values()] };
  }

  restore(state: State): void {
    this.byDigest.clear();
    for (const c of state.codes) this.byDigest.set(c.codeDigest, c);
  }
}
