import type { ClientNames } from '@svc/domain';

/**
 * Canonical JSON: keys sorted, no spaces, every character above U+007F written as `\uXXXX` (so the bytes
 * signed are ASCII and the same in any language that writes JSON this way, like Python's
 * `json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=True)`). Arrays keep their order.
 * What the QR signature covers, with `sig` removed.
 */
export function canonicalJson(value: unknown): string {
  const top =
    value !== null && typeof value === 'object' && !Array.isArray(value) ? { ...(value as Record<string, unknown>), sig: undefined } : value;
  return canonical(top).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
}

/**
 * The pairing QR, in the shape the clients scan (app QrPairingScanner.kt HermesPairingPayload, desktop
 * pairingQr.ts decodePairingPayload): the API server at the top level (`host` required, `port`, `key`,
 * `tls`), the relay in `relay`. The version key is the brand in force: `svc` by the spec, `hermes` under
 * RELAY_CLIENT_SPELLING=hermes (the clients read `hermes`, default it to 1 when absent, and gate on nothing
 * else); `sig` is carried, not verified, by both.
 */
export type QrPayload = {
  svc?: number;
  hermes?: number;
  host: string;
  port: number;
  key: string;
  tls: boolean;
  relay: { url: string; code: string; ttl_seconds?: number; grants?: Record<string, number>; transport_hint?: string };
  dashboard_url?: string;
  endpoints?: Record<string, unknown>[];
  sig: string;
};

/**
 * The paste-able form: `svc-relay://pair?payload=<base64url of the QR JSON, unpadded>` in the spec's
 * spelling; the desktop CLI's `--pair-qr` (pairingQr.ts) and the host's pair command unwrap only
 * `hermes-relay://`, written under RELAY_CLIENT_SPELLING=hermes. Both are read on input (`decodePairing`).
 */
export function pairingUrl(qrJson: string, names: ClientNames): string {
  return `${names.relayScheme}pair?payload=${Buffer.from(qrJson, 'utf8').toString('base64url')}`;
}

const INVITE_RE = /^(?:svc|hermes)-relay:\/\/pair\/?\?(?:.*&)?(?:payload|p)=([A-Za-z0-9_\-+/]+={0,2})(?:&.*)?$/i;

/**
 * Reads a pairing invite back: the raw QR JSON, or a `svc-relay://pair?payload=` or
 * `hermes-relay://pair?payload=` URL (base64url or base64, padded or not). Throws on anything else.
 */
export function decodePairing(raw: string): QrPayload {
  const text = raw.trim();
  let json = text;
  if (!text.startsWith('{')) {
    const m = INVITE_RE.exec(text);
    if (!m) throw new Error('not a pairing QR (JSON) nor a svc-relay:// or hermes-relay:// pairing URL');
    json = Buffer.from(m[1].replace(/\+/g, '-').replace(/\//g, '_'), 'base64url').toString('utf8');
  }
  const parsed = JSON.parse(json) as unknown;
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('the pairing payload is not a JSON object');
  return parsed as QrPayload;
}
