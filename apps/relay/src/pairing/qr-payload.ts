/** Canonical JSON: sorted keys, no spaces. What the QR signature covers (with `sig` removed). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

export type QrPayload = {
  svc: 1;
  relay: { url: string; code: string; ttl_seconds?: number; grants?: Record<string, number>; transport_hint?: string };
  dashboard_url?: string;
  api?: { url: string; key: string };
  spki_pin?: string;
  sig: string;
};

export function pairingUrl(payload: QrPayload): string {
  return `svc-relay://pair?payload=${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
}

/** Reads a `svc-relay://pair?payload=` URL back (the CLI's tests and phone simulator use it). */
export function decodePairingUrl(url: string): QrPayload {
  const m = /^svc-relay:\/\/pair\?payload=([A-Za-z0-9_-]+)$/.exec(url);
  if (!m) throw new Error('not a svc-relay pairing URL');
  return JSON.parse(Buffer.from(m[1], 'base64url').toString('utf8')) as QrPayload;
}
