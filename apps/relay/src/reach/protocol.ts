import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Reach (spec 4.11), wire protocol version 1, as the phone app (HermesReachTransport.kt) and the desktop
 * CLI (BrokerRelaySocket.ts) speak it. The broker matches a client to its host and moves opaque bytes:
 * the Secure Link TLS session runs inside, end to end, so the broker never sees a relay frame.
 *
 * - `GET /v1/connect` (WebSocket; no query, no Authorization: credentials only in the first frame).
 * - First TEXT frame (within 10 s, at most 4 KiB): `{type: register, protocol_version: 1, role: host |
 *   client, host_id, connection_id, credential_kind: host | bootstrap | route, token}`, exactly these keys.
 * - Errors: `{type: error, protocol_version: 1, code}` then close 1008.
 * - Host: `{type: registered}`, then control (TEXT) `publish_bootstrap`, `publish_route`, `revoke` (acked
 *   `published` / `revoked`), `open {stream_id, host_connection_id}` from the broker (this broker adds
 *   `credential_kind` and `credential_id`: the pairing id or route credential id the client matched with,
 *   which the relay keys that phone's rate limits by; other hosts ignore them); data (BINARY) framed
 *   `version u8 = 1 | flags u8 (2 DATA, 4 CLOSE) | stream id 16 bytes | payload`.
 * - Client: `{type: matched, stream_id}`, then BINARY frames of raw bytes, no header.
 */
export const REACH_PROTOCOL = 1;
export const HEADER_SIZE = 18;
export const FLAG_DATA = 2;
export const FLAG_CLOSE = 4;
/** A client frame's payload at most (a host frame adds the 18-byte header). */
export const MAX_FRAME = 1024 * 1024;
export const MAX_CONTROL = 4096;

export const b64url = (b: Buffer): string => b.toString('base64url');
export const ID_RE = /^[A-Za-z0-9_-]{22}$/;
export const DIGEST_RE = /^[A-Za-z0-9_-]{43}$/;

/** base64url (no padding) of SHA-256 over the token's UTF-8: what the broker stores instead of a token. */
export function tokenSha256(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('base64url');
}

export function sameDigest(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** 16 random bytes, base64url: host ids, connection ids, stream ids. */
export const newId = (): string => b64url(randomBytes(16));
/** 32 random bytes, base64url (43 characters): route and bootstrap tokens. */
export const newToken = (): string => b64url(randomBytes(32));

export function encodeHostFrame(flags: number, streamId: string, payload?: Buffer): Buffer {
  const head = Buffer.alloc(HEADER_SIZE);
  head[0] = REACH_PROTOCOL;
  head[1] = flags;
  Buffer.from(streamId, 'base64url').copy(head, 2, 0, 16);
  return payload && payload.length ? Buffer.concat([head, payload]) : head;
}

export function decodeHostFrame(frame: Buffer): { flags: number; streamId: string; payload: Buffer } | null {
  if (frame.length < HEADER_SIZE || frame[0] !== REACH_PROTOCOL) return null;
  const flags = frame[1];
  if (flags !== FLAG_DATA && flags !== FLAG_CLOSE) return null;
  const payload = frame.subarray(HEADER_SIZE);
  if (flags === FLAG_DATA && payload.length === 0) return null;
  if (flags === FLAG_CLOSE && payload.length !== 0) return null;
  return { flags, streamId: b64url(frame.subarray(2, 18)), payload };
}

export type Register = {
  type: 'register';
  protocol_version: number;
  role: 'host' | 'client';
  host_id: string;
  connection_id: string;
  credential_kind: 'host' | 'bootstrap' | 'route';
  token: string;
};

const REGISTER_KEYS = ['type', 'protocol_version', 'role', 'host_id', 'connection_id', 'credential_kind', 'token'].sort().join();

/** The registration frame checked to the letter; the reason names what is wrong (for the broker's log, never the token). */
export function parseRegister(
  text: string,
): { ok: true; value: Register } | { ok: false; code: 'unauthorized' | 'unsupported_version'; why: string } {
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { ok: false, code: 'unauthorized', why: 'registration is not JSON' };
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v) || Object.keys(v).sort().join() !== REGISTER_KEYS)
    return { ok: false, code: 'unauthorized', why: 'registration keys are not exactly the protocol set' };
  if (v.type !== 'register') return { ok: false, code: 'unauthorized', why: 'first frame is not a registration' };
  if (v.protocol_version !== REACH_PROTOCOL) return { ok: false, code: 'unsupported_version', why: `protocol_version ${String(v.protocol_version)}` };
  if (v.role !== 'host' && v.role !== 'client') return { ok: false, code: 'unauthorized', why: 'role' };
  if (typeof v.host_id !== 'string' || !ID_RE.test(v.host_id)) return { ok: false, code: 'unauthorized', why: 'host_id' };
  if (typeof v.connection_id !== 'string' || !ID_RE.test(v.connection_id)) return { ok: false, code: 'unauthorized', why: 'connection_id' };
  if (!['host', 'bootstrap', 'route'].includes(v.credential_kind as string)) return { ok: false, code: 'unauthorized', why: 'credential_kind' };
  if (typeof v.token !== 'string' || v.token.length < 32 || v.token.length > 512) return { ok: false, code: 'unauthorized', why: 'token length' };
  return { ok: true, value: v as unknown as Register };
}
