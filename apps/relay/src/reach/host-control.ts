import { DIGEST_RE, REACH_PROTOCOL } from './protocol';

/** A host's control frame (TEXT after `registered`), checked to the letter before the broker acts on it. */
export type HostControl =
  | { type: 'publish_bootstrap'; tokenSha256: string; pairingId: string; expiresAt: number }
  | { type: 'publish_route'; tokenSha256: string; credentialId: string; deviceIdHash: string; expiresAt: number }
  | { type: 'revoke'; credentialId: string };

/** Why a control frame is refused (the host's connection ends with `code`; `why` goes to the broker's log). */
export type ControlRefusal = { code: 'unauthorized' | 'unsupported_version'; why: string };

const BOOTSTRAP_KEYS = 'expires_at,max_uses,pairing_id,protocol_version,token_sha256,type';
const ROUTE_KEYS = 'credential_id,device_id_hash,expires_at,protocol_version,token_sha256,type';
const REVOKE_KEYS = 'credential_id,credential_kind,protocol_version,type';

/**
 * `publish_bootstrap` (one use, for a pairing QR), `publish_route` (a session's route credential) or
 * `revoke` (a route credential), each with exactly its keys; `expires_at` (epoch seconds or an ISO time)
 * must be in the future at `now` (epoch ms).
 */
export function parseHostControl(m: Record<string, unknown>, now: number): { ok: true; value: HostControl } | ({ ok: false } & ControlRefusal) {
  const keys = Object.keys(m).sort().join();
  const future = (v: unknown) => {
    const ms = typeof v === 'number' ? v * 1000 : typeof v === 'string' ? Date.parse(v) : NaN;
    return Number.isFinite(ms) && ms > now ? ms : null;
  };
  if (m.protocol_version !== REACH_PROTOCOL) return { ok: false, code: 'unsupported_version', why: 'control version' };
  if (m.type === 'publish_bootstrap' && keys === BOOTSTRAP_KEYS) {
    const exp = future(m.expires_at);
    if (
      !exp ||
      m.max_uses !== 1 ||
      typeof m.token_sha256 !== 'string' ||
      !DIGEST_RE.test(m.token_sha256) ||
      typeof m.pairing_id !== 'string' ||
      m.pairing_id.length > 128
    )
      return { ok: false, code: 'unauthorized', why: 'bad bootstrap publication' };
    return { ok: true, value: { type: 'publish_bootstrap', tokenSha256: m.token_sha256, pairingId: m.pairing_id, expiresAt: exp } };
  }
  if (m.type === 'publish_route' && keys === ROUTE_KEYS) {
    const exp = future(m.expires_at);
    if (
      !exp ||
      typeof m.token_sha256 !== 'string' ||
      !DIGEST_RE.test(m.token_sha256) ||
      typeof m.credential_id !== 'string' ||
      !/^[A-Za-z0-9_-]{1,256}$/.test(m.credential_id) ||
      typeof m.device_id_hash !== 'string'
    )
      return { ok: false, code: 'unauthorized', why: 'bad route publication' };
    return {
      ok: true,
      value: { type: 'publish_route', tokenSha256: m.token_sha256, credentialId: m.credential_id, deviceIdHash: m.device_id_hash, expiresAt: exp },
    };
  }
  if (m.type === 'revoke' && keys === REVOKE_KEYS && m.credential_kind === 'route' && typeof m.credential_id === 'string')
    return { ok: true, value: { type: 'revoke', credentialId: m.credential_id } };
  return { ok: false, code: 'unauthorized', why: `unknown control ${String(m.type).slice(0, 32)}` };
}
