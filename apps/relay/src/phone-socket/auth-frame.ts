import type { DeviceInfo, PairingChoices } from '@svc/domain';
import type { ClientSupports, SessionDeviceUpdated } from '@svc/events';

/**
 * Pure readers of a `system/auth` payload. Each returns what it read, or an error message (a string)
 * that the handshake answers with `auth.fail`.
 */

/** Trimmed, control characters removed, cut to `max`; null when empty. */
const text = (v: unknown, max: number): string | null => {
  if (typeof v !== 'string') return null;
  const clean = v.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return clean.length > 0 ? clean.slice(0, max) : null;
};

const DEVICE_FIELDS = ['device_name', 'device_id', 'device_model', 'device_platform', 'device_hostname', 'client_surface', 'device_form_factor'];

/** Device fields of `system/auth`; returns an error message when a field is the wrong type. */
export function deviceInfo(p: Record<string, unknown>): DeviceInfo | string {
  for (const f of DEVICE_FIELDS) {
    if (p[f] !== undefined && p[f] !== null && typeof p[f] !== 'string') return `${f} must be a string`;
  }
  const hostname = text(p.device_hostname, 64);
  return {
    deviceId: text(p.device_id, 128) ?? '',
    deviceName: text(p.device_name, 64) ?? hostname ?? 'Phone',
    deviceModel: text(p.device_model, 64),
    devicePlatform: text(p.device_platform, 64),
    deviceHostname: hostname,
    clientSurface: text(p.client_surface, 32)?.toLowerCase() ?? null,
    deviceFormFactor: text(p.device_form_factor, 32)?.toLowerCase() ?? null,
  };
}

/**
 * What a reconnecting client said about itself this time (renamed, updated): only the fields it sent, so
 * a field it left out keeps its recorded value. `device` is `deviceInfo(p)`.
 */
export function sentDeviceFields(p: Record<string, unknown>, device: DeviceInfo): Omit<SessionDeviceUpdated['data'], 'tokenPrefix'> {
  return {
    ...(p.device_name != null || p.device_hostname != null ? { deviceName: device.deviceName } : {}),
    ...(p.device_model !== undefined ? { deviceModel: device.deviceModel } : {}),
    ...(p.device_platform !== undefined ? { devicePlatform: device.devicePlatform } : {}),
    ...(p.device_hostname !== undefined ? { deviceHostname: device.deviceHostname } : {}),
    ...(p.client_surface !== undefined ? { clientSurface: device.clientSurface } : {}),
    ...(p.device_form_factor !== undefined ? { deviceFormFactor: device.deviceFormFactor } : {}),
  };
}

/** The refresh token the app sends beside its session token (empty: none); an error message when it is not a string. */
export function refreshTokenOf(p: Record<string, unknown>): { token: string | null } | string {
  if (p.refresh_token !== undefined && p.refresh_token !== null && typeof p.refresh_token !== 'string') return 'refresh_token must be a string';
  return { token: typeof p.refresh_token === 'string' && p.refresh_token.length > 0 ? p.refresh_token : null };
}

const MAX_CHOSEN_SECONDS = 315_360_000;
const MAX_MAP_KEYS = 32;

/** Seconds the phone chose: 0 (or beyond ten years) is "never", i.e. no cap on what the code grants. */
function chosenSeconds(v: unknown, field: string): number | null | string {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) return `${field} must be a whole number of seconds >= 0 (0: never)`;
  return v === 0 || v > MAX_CHOSEN_SECONDS ? null : v;
}

/**
 * The phone's own TTL and grant choices (the app's picker): they can only narrow what the code grants
 * (`narrowTerms`). Channels the code does not grant are ignored.
 */
export function pairingChoices(p: Record<string, unknown>): PairingChoices | string {
  const out: PairingChoices = {};
  if (p.ttl_seconds !== undefined && p.ttl_seconds !== null) {
    const ttl = chosenSeconds(p.ttl_seconds, 'ttl_seconds');
    if (typeof ttl === 'string') return ttl;
    out.ttlSeconds = ttl;
  }
  if (p.grants !== undefined && p.grants !== null) {
    if (typeof p.grants !== 'object' || Array.isArray(p.grants)) return 'grants must be an object of channel -> seconds';
    const entries = Object.entries(p.grants as Record<string, unknown>);
    if (entries.length > MAX_MAP_KEYS) return `grants: at most ${MAX_MAP_KEYS} channels`;
    out.grants = {};
    for (const [channel, value] of entries) {
      if (value === null) {
        out.grants[channel] = null;
        continue;
      }
      const seconds = chosenSeconds(value, `grants.${channel.slice(0, 32)}`);
      if (typeof seconds === 'string') return seconds;
      out.grants[channel] = seconds;
    }
  }
  return out;
}

const SUPPORT_KEY_RE = /^[A-Za-z0-9_.:-]{1,64}$/;

/**
 * `supports` of `system/auth`: a flat object of capability flags. Entries with another key shape or a
 * value that is not a boolean, a finite number or a string of at most 64 characters are dropped; at most
 * 32 are kept. Not an object at all: an error message.
 */
export function clientSupports(p: Record<string, unknown>): ClientSupports | string {
  if (p.supports === undefined || p.supports === null) return {};
  if (typeof p.supports !== 'object' || Array.isArray(p.supports)) return 'supports must be an object';
  const out: ClientSupports = {};
  let n = 0;
  for (const [k, v] of Object.entries(p.supports as Record<string, unknown>)) {
    if (n >= MAX_MAP_KEYS) break;
    if (!SUPPORT_KEY_RE.test(k)) continue;
    if (typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)) || (typeof v === 'string' && v.length <= 64)) {
      out[k] = v;
      n++;
    }
  }
  return out;
}
