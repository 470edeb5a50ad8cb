import { epoch, secondsBetween, type MediaEntry, type MediaLimits, type MediaPolicyContext } from '@svc/domain';

/** `GET /media/inspect`: the registry's entries (newest first) with the limits and policy they live under. */
export function mediaInspection(entries: readonly MediaEntry[], now: Date, ownedDir: string, limits: MediaLimits, policy: MediaPolicyContext) {
  return {
    ok: true as const,
    now: epoch(now.getTime()),
    owned_dir: ownedDir,
    limits: {
      max_size_bytes: limits.maxSizeBytes,
      ttl_seconds: limits.ttlSeconds,
      lru_cap: limits.lruCap,
      strict_sandbox: policy.strictSandbox,
      allowed_roots: [policy.tmpDir, policy.workspace, ...policy.allowedRoots],
    },
    count: entries.length,
    entries: entries.toSorted((a, b) => b.registeredAt - a.registeredAt).map((e) => entryView(e, now)),
  };
}

function entryView(e: MediaEntry, now: Date) {
  return {
    token_prefix: e.tokenPrefix,
    path: e.path,
    content_type: e.contentType,
    file_name: e.fileName,
    size: e.size,
    owned: e.owned,
    sensitive: e.sensitive,
    source: e.source,
    via: e.via,
    registered_at: epoch(e.registeredAt),
    age_seconds: secondsBetween(e.registeredAt, now),
    expires_at: epoch(e.expiresAt),
    expires_in_seconds: secondsBetween(now, e.expiresAt),
    expired: e.expiresAt <= now.getTime(),
    fetch_count: e.fetchCount,
    last_fetched_at: e.lastFetchedAt === null ? null : epoch(e.lastFetchedAt),
  };
}
