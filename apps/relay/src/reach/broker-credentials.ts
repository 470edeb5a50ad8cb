import { epoch } from '@svc/domain';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { atomicWrite } from '../common/atomic-write';
import { parseJsonObject } from '../common/sockets/json-object';
import { ExpiringIds } from './expiring-ids';
import { DIGEST_RE, ID_RE } from './protocol';

export class BrokerConfigError extends Error {}

/** The credential file: opaque host ids, each with the base64url SHA-256 of its host token. */
export function readCredentials(file: string): Map<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new BrokerConfigError(`cannot read the credentials file ${file}: ${(err as Error).message}`);
  }
  const hosts = (parsed as { hosts?: unknown })?.hosts;
  if (typeof hosts !== 'object' || hosts === null || Array.isArray(hosts))
    throw new BrokerConfigError(`${file}: expected {"hosts": {"<host id>": {"host_token_sha256": "..."}}}`);
  const out = new Map<string, string>();
  for (const [id, v] of Object.entries(hosts)) {
    const digest = (v as { host_token_sha256?: unknown })?.host_token_sha256;
    if (!ID_RE.test(id)) throw new BrokerConfigError(`${file}: host id "${id.slice(0, 40)}" is not 22 base64url characters`);
    if (typeof digest !== 'string' || !DIGEST_RE.test(digest))
      throw new BrokerConfigError(`${file}: host ${id} needs host_token_sha256 (43 base64url characters: the digest, never the token)`);
    out.set(id, digest);
  }
  return out;
}

/** A credential a host published, by the digest of its token (the broker never holds a token). */
export type Credential = {
  hostId: string;
  kind: 'bootstrap' | 'route';
  id: string;
  expiresAt: number;
  usesLeft: number;
  deviceIdHash: string | null;
};

/**
 * The bootstrap and route credentials hosts published, and the digests of bootstrap credentials already
 * used (a replay is refused for a day, or until the credential would have expired; at most `replayIds`
 * of them, the oldest going first). With a state file they survive a restart (written atomically after
 * each change); without one they live in memory.
 */
export class BrokerCredentials {
  private readonly byDigest = new Map<string, Credential>();
  private readonly consumed: ExpiringIds;

  constructor(
    private readonly stateFile: string | null | undefined,
    private readonly perHost: number,
    replayIds: number,
    private readonly now: () => number,
  ) {
    this.consumed = new ExpiringIds(replayIds);
  }

  get consumedCount(): number {
    return this.consumed.size;
  }

  get(digest: string): Credential | undefined {
    return this.byDigest.get(digest);
  }

  isConsumed(digest: string): boolean {
    return this.consumed.has(digest);
  }

  /** Expired credentials are dropped first; then whether `hostId` may publish one more. */
  roomFor(hostId: string): boolean {
    const now = this.now();
    for (const [d, c] of this.byDigest) if (c.expiresAt <= now) this.byDigest.delete(d);
    return [...this.byDigest.values()].filter((c) => c.hostId === hostId).length < this.perHost;
  }

  publish(digest: string, c: Credential): void {
    this.byDigest.set(digest, c);
    this.save();
  }

  /** Drops `hostId`'s route credential `id` (any token it had); the digests dropped. Not saved here. */
  dropRoute(hostId: string, id: string): string[] {
    const dropped: string[] = [];
    for (const [d, c] of this.byDigest)
      if (c.hostId === hostId && c.kind === 'route' && c.id === id) {
        this.byDigest.delete(d);
        dropped.push(d);
      }
    return dropped;
  }

  /** One use of a matched credential; a bootstrap credential is gone after it and its digest kept as used. */
  use(digest: string, c: Credential): void {
    c.usesLeft--;
    if (c.kind !== 'bootstrap') return;
    this.byDigest.delete(digest);
    this.consumed.add(digest, Math.max(this.now() + 86_400_000, c.expiresAt));
    this.save();
  }

  pruneConsumed(now: number): void {
    this.consumed.prune(now);
  }

  /** Reads the state file (credentials of hosts no longer listed in `hostDigests` are left out). */
  load(hostDigests: ReadonlyMap<string, string>): void {
    const file = this.stateFile;
    if (!file || !fs.existsSync(file)) return;
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      throw new BrokerConfigError(`cannot read the state file ${file}: ${(err as Error).message}`);
    }
    const parsed = parseJsonObject(text);
    if (parsed === null) throw new BrokerConfigError(`the state file ${file} is not a JSON object; move it away to start empty`);
    const list = (v: unknown): Array<Record<string, unknown>> =>
      Array.isArray(v) ? v.filter((x): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x)) : [];
    const now = this.now();
    for (const c of list(parsed.credentials)) {
      if (typeof c.token_sha256 !== 'string' || typeof c.host_id !== 'string' || !hostDigests.has(c.host_id)) continue;
      const exp = Number(c.expires_at) * 1000;
      if (!(exp > now) || (c.kind !== 'bootstrap' && c.kind !== 'route')) continue;
      this.byDigest.set(c.token_sha256, {
        hostId: c.host_id,
        kind: c.kind,
        id: String(c.credential_id ?? ''),
        expiresAt: exp,
        usesLeft: Number(c.uses_left ?? 1),
        deviceIdHash: typeof c.device_id_hash === 'string' ? c.device_id_hash : null,
      });
    }
    for (const c of list(parsed.consumed)) {
      if (typeof c.token_sha256 === 'string' && Number(c.expires_at) * 1000 > now) this.consumed.add(c.token_sha256, Number(c.expires_at) * 1000);
    }
  }

  save(): void {
    const file = this.stateFile;
    if (!file) return;
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const body = {
      version: 1,
      credentials: [...this.byDigest].map(([d, c]) => ({
        host_id: c.hostId,
        token_sha256: d,
        expires_at: epoch(c.expiresAt),
        uses_left: Math.min(c.usesLeft, 1_000_000_000),
        kind: c.kind,
        credential_id: c.id,
        device_id_hash: c.deviceIdHash,
      })),
      consumed: [...this.consumed.entries()].map(([d, until]) => ({ token_sha256: d, expires_at: epoch(until) })),
    };
    atomicWrite(file, JSON.stringify(body));
  }
}
