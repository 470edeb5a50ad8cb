import type { MediaEvent, MediaFile, NewEvent } from '@svc/events';
import { DomainError } from '../errors';
import type { ReadModels } from '../read-models';
import { isLiveMedia, type MediaEntry } from './media.projection';

/** RELAY_MEDIA_* limits (spec 4.13, 8). */
export type MediaLimits = { ttlSeconds: number; lruCap: number; maxSizeBytes: number };

export const DEFAULT_MEDIA_LIMITS: MediaLimits = { ttlSeconds: 86_400, lruCap: 500, maxSizeBytes: 100 * 1024 * 1024 };

export type NewMediaFile = Omit<MediaFile, 'expiresAt'>;
export type MediaOrigin = { source: 'register' | 'registrar' } | { upload: 'multipart' | 'json' };

/**
 * A new token for a checked file. Entries past their TTL are expired first, then the least recently
 * used are evicted so the registry never holds more than `lruCap` entries.
 */
export function registerMedia(m: ReadModels, file: NewMediaFile, origin: MediaOrigin, limits: MediaLimits, now: Date): NewEvent<MediaEvent>[] {
  if (file.size > limits.maxSizeBytes) throw tooLarge(file.size, limits.maxSizeBytes);
  if (m.media.byToken(file.tokenDigest)) throw new DomainError('media.token_collision', 'conflict', 'token collision; retry');
  const events: NewEvent<MediaEvent>[] = expireMedia(m, now);
  const gone = new Set(events.map((e) => (e.data as { tokenDigest: string }).tokenDigest));
  const remaining = m.media.leastRecentlyUsed().filter((e) => !gone.has(e.tokenDigest));
  const excess = remaining.length + 1 - limits.lruCap;
  for (const victim of remaining.slice(0, Math.max(0, excess))) {
    events.push({
      type: 'media.evicted',
      data: { tokenDigest: victim.tokenDigest, tokenPrefix: victim.tokenPrefix, ownedPath: ownedPathOf(victim), cap: limits.lruCap },
    });
  }
  const data = { ...file, expiresAt: new Date(now.getTime() + limits.ttlSeconds * 1000).toISOString() };
  events.push(
    'upload' in origin
      ? { type: 'media.uploaded', data: { ...data, via: origin.upload } }
      : { type: 'media.registered', data: { ...data, source: origin.source } },
  );
  return events;
}

/** The live entry a token digest names: 404 when unknown, or expired even if the sweep has not run yet. */
export function requireMedia(m: ReadModels, tokenDigest: string, now: Date): MediaEntry {
  const entry = m.media.byToken(tokenDigest);
  if (!entry)
    throw new DomainError('media.not_found', 'not_found', 'unknown media token (tokens end when they expire, are evicted or the relay restarts)');
  if (!isLiveMedia(entry, now)) throw new DomainError('media.expired', 'not_found', 'this media token has expired');
  return entry;
}

/** Idempotent: marking a sensitive entry again writes nothing. */
export function markSensitive(m: ReadModels, tokenDigest: string, now: Date): NewEvent<MediaEvent>[] {
  const entry = requireMedia(m, tokenDigest, now);
  if (entry.sensitive) return [];
  return [{ type: 'media.marked_sensitive', data: { tokenDigest, tokenPrefix: entry.tokenPrefix } }];
}

export type ServedRange = { status: 200 | 206; start: number; end: number; size: number };

/** A token fetch about to stream; re-checked here so a fetch racing expiry is refused, not recorded. */
export function recordTokenFetch(m: ReadModels, tokenDigest: string, served: ServedRange, now: Date): NewEvent<MediaEvent>[] {
  const entry = requireMedia(m, tokenDigest, now);
  return [{ type: 'media.fetched', data: { via: 'token', tokenDigest, tokenPrefix: entry.tokenPrefix, path: null, ...served } }];
}

export function recordPathFetch(path: string, served: ServedRange): NewEvent<MediaEvent>[] {
  return [{ type: 'media.fetched', data: { via: 'by-path', tokenDigest: null, tokenPrefix: null, path, ...served } }];
}

/** The sweep: entries past their TTL. */
export function expireMedia(m: ReadModels, now: Date): NewEvent<MediaEvent>[] {
  return m.media
    .overdue(now)
    .map((e) => ({ type: 'media.expired', data: { tokenDigest: e.tokenDigest, tokenPrefix: e.tokenPrefix, ownedPath: ownedPathOf(e) } }));
}

const ownedPathOf = (e: MediaEntry): string | null => (e.owned ? e.path : null);

/** Records an owned file's removal (the caller deletes it first, once no entry names it). */
export function retireOwnedFile(
  path: string,
  reason: 'released' | 'shutdown' | 'restart',
  result: { deleted: boolean; error?: string },
): NewEvent<MediaEvent>[] {
  return [{ type: 'media.retired', data: { path, reason, ...result } }];
}

/** An upload past the cap (413; a registered or by-path file past it is a 403 policy refusal). */
export function uploadTooLarge(max: number): DomainError {
  return new DomainError(
    'media.upload_too_large',
    'too_large',
    `the upload is larger than the media cap (RELAY_MEDIA_MAX_SIZE_MB): at most ${max} bytes`,
    {
      max_size: max,
    },
  );
}

export function tooLarge(size: number, max: number): DomainError {
  return new DomainError('media.too_large', 'forbidden', `the file is ${size} bytes; the media cap (RELAY_MEDIA_MAX_SIZE_MB) is ${max} bytes`, {
    size,
    max_size: max,
  });
}
