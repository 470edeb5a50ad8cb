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

/** How a code stopped being usable: what a phone that presents it again is told (docs/PROTOCOL.md, Pairing). */
export type EndedCode = 'used' | 'expired' | 'denied';

/**
 * How many ended codes are remembered, oldest forgotten first: enough for every code an operator mints in
 * a day many times over, bounded so a flood of public requests cannot grow the model. A forgotten code is
 * answered as unknown, which is still true enough to act on (mint a new one).
 */
export const ENDED_CODES_KEPT = 1024;

type State = { codes: MutablePairingCode[]; ended?: Array<[string, EndedCode]> };

/**
 * Live codes, and how recently ended ones ended. A consumed, expired or denied code is gone from the live
 * ones, so it can never match again; its digest (never the code) is kept to say why it failed.
 */
export class PairingProjection implements Projection<State> {
  private readonly byDigest = new Map<string, MutablePairingCode>();
  private readonly endedByDigest = new Map<string, EndedCode>();

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
        this.end(e.data.codeDigest, 'denied');
        break;
      case 'pairing.code_consumed':
        this.end(e.data.codeDigest, 'used');
        break;
      case 'pairing.code_expired':
        this.end(e.data.codeDigest, 'expired');
        break;
      default:
        break;
    }
  }

  private end(codeDigest: string, how: EndedCode): void {
    this.byDigest.delete(codeDigest);
    this.endedByDigest.delete(codeDigest); // re-inserted last: a code registered again and ended again is the newest
    this.endedByDigest.set(codeDigest, how);
    if (this.endedByDigest.size > ENDED_CODES_KEPT) this.endedByDigest.delete(this.endedByDigest.keys().next().value!);
  }

  /** How a code that is no longer live ended, while it is among the last ENDED_CODES_KEPT. */
  ended(codeDigest: string): EndedCode | undefined {
    return this.endedByDigest.get(codeDigest);
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
    return { codes: [...this.byDigest.values()], ended: [...this.endedByDigest] };
  }

  restore(state: State): void {
    this.byDigest.clear();
    this.endedByDigest.clear();
    for (const c of state.codes) this.byDigest.set(c.codeDigest, c);
    // A snapshot written before ended codes were kept has none: those codes are answered as unknown.
    for (const [digest, how] of state.ended ?? []) this.endedByDigest.set(digest, how);
  }
}
