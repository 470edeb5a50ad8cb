import type { PairingTerms, Projection, StoredEvent, StoredRelayEvent } from '@svc/events';
import { isoMs } from '../epoch';
import { eventAtMs } from '../event-time';
import type { DeepReadonly } from '../deep-readonly';

type MutableTrust = {
  trustId: string;
  deviceId: string;
  refreshDigest: string;
  /** Epoch ms; renewal ends here (the lifetime is not extended by renewals, like the reference relay's). */
  expiresAt: number;
  terms: PairingTerms;
  issuedAt: number;
  reason: 'paired' | 'adopted';
  /** The session it last opened (or was issued with). */
  tokenPrefix: string;
  /** The keyed digest of that session's token, which renewal must present; null for a trust from before binding. */
  tokenDigest: string | null;
  renewals: number;
  lastRenewedAt: number | null;
};

/** One trusted device: what renewal gives it, and which refresh token is current. Never the token itself. Read-only outside this projection. */
export type Trust = DeepReadonly<MutableTrust>;

type State = { trusts: MutableTrust[]; retired: Array<[string, string]> };

/**
 * Digests rotated out per trust that are remembered to catch a copy: the newest ones (a phone renews at
 * most once per session lifetime, so this spans months of renewals), bounded so one device cannot grow it.
 */
export const RETIRED_PER_TRUST = 32;

/** Live trusts by id, by current refresh digest and by device; rotated-out digests to detect reuse. */
export class TrustProjection implements Projection<State> {
  private readonly byId = new Map<string, MutableTrust>();
  private readonly byDigest = new Map<string, MutableTrust>();
  private readonly byDevice = new Map<string, MutableTrust>();
  /** Rotated-out digest -> trust id, in rotation order (Map keeps insertion order). */
  private readonly retired = new Map<string, string>();

  apply(stored: StoredEvent): void {
    const e = stored as StoredRelayEvent;
    switch (e.type) {
      case 'trust.issued': {
        const t: MutableTrust = {
          trustId: e.data.trustId,
          deviceId: e.data.deviceId,
          refreshDigest: e.data.refreshDigest,
          expiresAt: isoMs(e.data.expiresAt),
          terms: e.data.terms,
          issuedAt: eventAtMs(e),
          reason: e.data.reason,
          tokenPrefix: e.data.tokenPrefix,
          tokenDigest: e.data.tokenDigest ?? null,
          renewals: 0,
          lastRenewedAt: null,
        };
        this.byId.set(t.trustId, t);
        this.byDigest.set(t.refreshDigest, t);
        this.byDevice.set(t.deviceId, t);
        break;
      }
      case 'trust.rotated': {
        const t = this.byId.get(e.data.trustId);
        if (!t) break;
        this.byDigest.delete(t.refreshDigest);
        this.retire(t.refreshDigest, t.trustId);
        // An abandoned renewal makes the previous token current again: it is no longer "rotated out".
        this.retired.delete(e.data.refreshDigest);
        t.refreshDigest = e.data.refreshDigest;
        t.tokenPrefix = e.data.tokenPrefix;
        t.tokenDigest = e.data.tokenDigest ?? null;
        if (e.data.reason === 'renewed') {
          t.renewals++;
          t.lastRenewedAt = eventAtMs(e);
        } else if (e.data.reason === 'abandoned') {
          t.renewals = Math.max(0, t.renewals - 1);
        }
        this.byDigest.set(t.refreshDigest, t);
        break;
      }
      case 'trust.ended': {
        const t = this.byId.get(e.data.trustId);
        if (!t) break;
        this.byId.delete(t.trustId);
        this.byDigest.delete(t.refreshDigest);
        if (this.byDevice.get(t.deviceId) === t) this.byDevice.delete(t.deviceId);
        for (const [digest, id] of this.retired) if (id === t.trustId) this.retired.delete(digest);
        break;
      }
      default:
        break;
    }
  }

  private retire(digest: string, trustId: string): void {
    this.retired.set(digest, trustId);
    let mine = 0;
    for (const id of this.retired.values()) if (id === trustId) mine++;
    if (mine <= RETIRED_PER_TRUST) return;
    for (const [d, id] of this.retired) {
      if (id === trustId) {
        this.retired.delete(d);
        return;
      }
    }
  }

  /** The live trust whose current refresh token has this digest. */
  byRefreshDigest(digest: string): Trust | undefined {
    return this.byDigest.get(digest);
  }

  /** The live trust a rotated-out digest belonged to (a copy presented again). */
  retiredOwner(digest: string): Trust | undefined {
    const id = this.retired.get(digest);
    return id === undefined ? undefined : this.byId.get(id);
  }

  forDevice(deviceId: string): Trust | undefined {
    return this.byDevice.get(deviceId);
  }

  get(trustId: string): Trust | undefined {
    return this.byId.get(trustId);
  }

  all(): readonly Trust[] {
    return [...this.byId.values()];
  }

  /** Trusts past their lifetime whose `trust.ended` is not written yet. */
  overdue(now: Date): readonly Trust[] {
    return this.all().filter((t) => t.expiresAt <= now.getTime());
  }

  snapshot(): State {
    return {
      trusts: [...this.byId.values()].map((t) => ({ ...t, terms: { ...t.terms, grants: { ...t.terms.grants } } })),
      retired: [...this.retired],
    };
  }

  restore(state: State): void {
    this.byId.clear();
    this.byDigest.clear();
    this.byDevice.clear();
    this.retired.clear();
    for (const t of state.trusts) {
      t.tokenDigest ??= null;
      this.byId.set(t.trustId, t);
      this.byDigest.set(t.refreshDigest, t);
      this.byDevice.set(t.deviceId, t);
    }
    for (const [digest, id] of state.retired) this.retired.set(digest, id);
  }
}
