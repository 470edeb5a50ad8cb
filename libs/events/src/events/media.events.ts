import type { Ev } from '../event';

/**
 * Media registry (spec 2.4, 4.4). Entries are ephemeral: the projection empties at `relay.started`.
 * The token itself never enters the log: `tokenDigest` is its keyed digest and `tokenPrefix` its
 * first 8 characters (what the operator sees). The host path is recorded (the log is the operator's
 * audit), but no phone-facing response ever carries it.
 */
export type MediaFile = {
  tokenDigest: string;
  tokenPrefix: string;
  /** Real path (symlinks resolved) of the registered file. */
  path: string;
  contentType: string;
  /** Display name for Content-Disposition; null when none was registered. */
  fileName: string | null;
  size: number;
  /** `<dev>:<ino>[:<birth ns>]` at registration: a fetch that opens any other file is refused. */
  fileId: string;
  /** The relay deletes this file when the last token naming it retires. */
  owned: boolean;
  sensitive: boolean;
  expiresAt: string;
};

/** A host file registered by the operator (`POST /media/register`) or by a relay feature (registrar). */
export type MediaRegistered = Ev<'media.registered', MediaFile & { source: 'register' | 'registrar' }>;
/** A phone upload, streamed into the relay's owned directory. */
export type MediaUploaded = Ev<'media.uploaded', MediaFile & { via: 'multipart' | 'json' }>;
export type MediaMarkedSensitive = Ev<'media.marked_sensitive', { tokenDigest: string; tokenPrefix: string }>;
/** One served response: a token fetch, or a by-path fetch (no token; `path` set). */
export type MediaFetched = Ev<
  'media.fetched',
  {
    via: 'token' | 'by-path';
    tokenDigest: string | null;
    tokenPrefix: string | null;
    path: string | null;
    status: 200 | 206;
    /** First and last byte offsets served (inclusive); an empty file serves none (-1). */
    start: number;
    end: number;
    size: number;
  }
>;
/** A by-path fetch the media policy refused (audit: which device asked for what). */
export type MediaRefused = Ev<'media.refused', { path: string; code: string; reason: string }>;
/** `ownedPath`: the owned file this entry held (deleted once no other entry names it), else null. */
export type MediaExpired = Ev<'media.expired', { tokenDigest: string; tokenPrefix: string; ownedPath: string | null }>;
/** Least recently used entry pushed out by a registration beyond `RELAY_MEDIA_LRU_CAP`. */
export type MediaEvicted = Ev<'media.evicted', { tokenDigest: string; tokenPrefix: string; ownedPath: string | null; cap: number }>;
/**
 * An owned file was removed from disk: its last token retired (`released`), the relay stopped in
 * order (`shutdown`), or it was left behind by an earlier run (`restart`), or an upload was abandoned.
 */
export type MediaRetired = Ev<'media.retired', { path: string; reason: 'released' | 'shutdown' | 'restart'; deleted: boolean; error?: string }>;

export type MediaEvent =
  MediaRegistered | MediaUploaded | MediaMarkedSensitive | MediaFetched | MediaRefused | MediaExpired | MediaEvicted | MediaRetired;
