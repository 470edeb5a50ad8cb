import { bearer, Phone, readEvents, type TestRelay } from '../support/harness';
import { startRelay } from './client-relay';

/**
 * The phone app's side of pairing, replayed with the exact shapes the app reads and sends. The app is
 * Kotlin (kotlinx.serialization with ignoreUnknownKeys and coerceInputValues): a field of the wrong JSON
 * type fails the whole decode, an unknown one is ignored, and a null becomes the field's default.
 */

type AppRelayPairing = { url: string; code: string; ttlSeconds: number | null; grants: Record<string, number> | null; transportHint: string | null };
type AppPairingPayload = {
  hermes: number;
  host: string;
  port: number;
  key: string;
  tls: boolean;
  dashboardUrl: string | null;
  relay: AppRelayPairing | null;
};

const isLong = (v: unknown) => typeof v === 'number' && Number.isInteger(v);
function field<T>(o: Record<string, unknown>, name: string, ok: (v: unknown) => boolean, fallback: T): T {
  const v = o[name];
  if (v === undefined || v === null) return fallback; // coerceInputValues: null -> default
  if (!ok(v)) throw new Error(`${name}: wrong JSON type`);
  return v as T;
}

/**
 * app/src/main/kotlin/com/hermesandroid/relay/ui/components/QrPairingScanner.kt:278-330
 * (parseHermesPairingQr -> parseHermesRelayQr): raw JSON only; `hermes` defaults to 1 and must be >= 1;
 * HermesPairingPayload (:176-200) and RelayPairing (:227-235) decoded strictly by type; a blank `host` is
 * no pairing QR; `key` goes through normalizeCredentialForHeader (printable ASCII, CredentialHeaders.kt:14).
 * (The generic API/dashboard fallbacks (:318-) never yield a relay block, so they do not pair a relay.)
 */
function appScan(raw: string): AppPairingPayload | null {
  let obj: Record<string, unknown>;
  try {
    obj = JSON.parse(raw.trim()) as Record<string, unknown>;
    if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return null;
    const hermes = field(obj, 'hermes', isLong, 1);
    if (hermes < 1) return null;
    const r = obj.relay as Record<string, unknown> | null | undefined;
    let relay: AppRelayPairing | null = null;
    if (r !== undefined && r !== null) {
      if (typeof r !== 'object') throw new Error('relay: wrong type');
      const grants = field<Record<string, unknown> | null>(r, 'grants', (v) => typeof v === 'object', null);
      if (grants) for (const v of Object.values(grants)) if (!isLong(v)) throw new Error('grants: Map<String, Long>');
      relay = {
        url: field(r, 'url', (v) => typeof v === 'string', ''),
        code: field(r, 'code', (v) => typeof v === 'string', ''),
        ttlSeconds: field<number | null>(r, 'ttl_seconds', isLong, null),
        grants: grants as Record<string, number> | null,
        transportHint: field<string | null>(r, 'transport_hint', (v) => typeof v === 'string', null),
      };
    }
    const payload: AppPairingPayload = {
      hermes,
      host: field(obj, 'host', (v) => typeof v === 'string', ''),
      port: field(obj, 'port', isLong, 8642),
      key: field(obj, 'key', (v) => typeof v === 'string', ''),
      tls: field(obj, 'tls', (v) => typeof v === 'boolean', false),
      dashboardUrl: field<string | null>(obj, 'dashboard_url', (v) => typeof v === 'string', null),
      relay,
    };
    field(obj, 'sig', (v) => typeof v === 'string', null);
    if (payload.host.trim() === '') return null;
    if (/[^\x21-\x7e]/.test(payload.key.trim())) return null;
    return payload;
  } catch {
    return null;
  }
}

/** QrPairingScanner.kt:238-245 hasUsableRelayPairing: what makes the scanner lock on in relay mode. */
function hasUsableRelayPairing(p: AppPairingPayload): boolean {
  if (!p.relay || p.relay.code.trim() === '') return false;
  try {
    const u = new URL(p.relay.url.trim());
    return (u.protocol === 'ws:' || u.protocol === 'wss:') && u.hostname !== '';
  } catch {
    return false;
  }
}

/** AuthManager.kt:820-836: putRelayDeviceIdentity + putRelayClientSupports, on every auth frame. */
const appIdentity = {
  device_name: 'Pixel 8',
  device_hostname: 'Pixel 8',
  device_model: 'Pixel 8',
  device_platform: 'Android 14',
  client_surface: 'android',
  device_form_factor: 'phone',
  supports: { typed_stream_events: true, event_schema_version: 1 },
};

/** RelayHttpClient.kt:1153-1161: the message the app shows for a failed PATCH (Extend). */
function appExtendMessage(status: number, reasonPhrase: string): string {
  if (status === 400) return 'Invalid extend request (check TTL/grants)';
  if (status === 401 || status === 403) return 'Unauthorized — re-pair with the relay';
  if (status === 404) return 'Session not found — it may have expired';
  if (status === 409) return 'Ambiguous token prefix — retry with more chars';
  if (status >= 500) return `Relay error (HTTP ${status})`;
  return `HTTP ${status}: ${reasonPhrase.trim() === '' ? 'request failed' : reasonPhrase}`;
}

const DAY = 86_400;

describe('compat: the phone app pairs, lists, extends and revokes', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay();
  });
  afterAll(() => relay.close('test done'));
  const now = () => Math.floor(relay.clock.now().getTime() / 1000);

  /** A QR as the host's pair command has the relay mint it (plugin/pair.py:972-985). */
  async function mintQr(extra: Record<string, unknown> = {}): Promise<string> {
    const res = await fetch(`${relay.url}/pairing/mint`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ host: '192.168.1.50', port: 8642, api_key: '', tls: false, ttl_seconds: 7 * DAY, transport_hint: 'ws', ...extra }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { qr_payload: string }).qr_payload;
  }

  /** Scan, then the app's first frame (AuthManager.kt:895-915): code, device id, identity, picker TTL, QR grants. */
  async function scanAndPair(qr: string, picker: { ttl_seconds?: number; grants?: Record<string, unknown> } = {}, deviceId = 'app-device-1') {
    const payload = appScan(qr);
    expect(payload).not.toBeNull();
    expect(hasUsableRelayPairing(payload!)).toBe(true);
    const phone = await Phone.connect(relay.url);
    const frame: Record<string, unknown> = { pairing_code: payload!.relay!.code, device_id: deviceId, ...appIdentity };
    if (picker.ttl_seconds !== undefined) frame.ttl_seconds = picker.ttl_seconds;
    const grants = picker.grants ?? payload!.relay!.grants; // ConnectionViewModel.kt:4931 setPendingGrants(relay.grants)
    if (grants) frame.grants = grants;
    const ok = await phone.auth(frame);
    return { phone, ok, payload: payload! };
  }

  it('the QR the relay mints is one the scanner locks on to (and the old svc-relay:// QR text is not)', async () => {
    const qr = await mintQr();
    const p = appScan(qr)!;
    expect(p).toMatchObject({ host: '192.168.1.50', port: 8642, key: '', tls: false });
    expect(p.relay).toMatchObject({ code: expect.stringMatching(/^[A-Z0-9]{6}$/), ttlSeconds: 7 * DAY, transportHint: 'ws' });
    expect(hasUsableRelayPairing(p)).toBe(true);
    // The pairing URL is for pasting (desktop CLI, the relay's own parser): the scanner rejects it.
    const url = `svc-relay://pair?payload=${Buffer.from(qr).toString('base64url')}`;
    expect(appScan(url)).toBeNull();
  });

  it('system/auth: the picker TTL and grants narrow what the code grants, never widen it', async () => {
    const qr = await mintQr({ grants: { terminal: 3 * DAY, bridge: DAY } });
    // The picker chose 1 day; the QR's grants are echoed back as the app does.
    const a = await scanAndPair(qr, { ttl_seconds: DAY }, 'narrow-1');
    expect(a.ok.type).toBe('auth.ok');
    expect(a.ok.payload.expires_at).toBe(now() + DAY);
    expect(a.ok.payload.grants).toMatchObject({ terminal: now() + DAY, bridge: now() + DAY, chat: now() + DAY });
    a.phone.close();

    // A longer TTL, "never" (0), or a grant on a channel the code did not give: the code's terms stand.
    const b = await scanAndPair(
      await mintQr({ grants: { terminal: 3 * DAY, bridge: false } }),
      { ttl_seconds: 0, grants: { bridge: 0, terminal: 30 * DAY, tui: 60 } },
      'narrow-2',
    );
    expect(b.ok.payload.expires_at).toBe(now() + 7 * DAY);
    const grants = b.ok.payload.grants as Record<string, number | null>;
    expect(grants.bridge).toBeUndefined();
    expect(grants.terminal).toBe(now() + 3 * DAY);
    expect(grants.tui).toBe(now() + 60);
    b.phone.close();

    const c = await scanAndPair(await mintQr(), { ttl_seconds: 90 * DAY }, 'narrow-3');
    expect(c.ok.payload.expires_at).toBe(now() + 7 * DAY);
    c.phone.close();
  });

  it('auth.ok carries what AuthManager.handleAuthOk (AuthManager.kt:1131-1200) and PairedSession read', async () => {
    const { phone, ok } = await scanAndPair(await mintQr(), {}, 'authok-1');
    const p = ok.payload;
    // :1135-1138 session_token normalised as a header credential (printable ASCII, non-empty).
    expect(p.session_token).toMatch(/^[\x21-\x7e]{16,}$/);
    // :1177-1181 expires_at: a long or null; :1183-1189 grants: channel -> long | null; :1191 transport_hint.
    expect(isLong(p.expires_at) || p.expires_at === null).toBe(true);
    for (const v of Object.values(p.grants as Record<string, unknown>)) expect(isLong(v) || v === null).toBe(true);
    expect(p.transport_hint).toBe('ws');
    expect(p).toMatchObject({ client_surface: 'android', device_form_factor: 'phone', server_version: expect.any(String) });
    phone.close();
  });

  it('keeps the device fields (bounded, as event data) and supports per socket on the connections read model', async () => {
    const { phone, ok } = await scanAndPair(await mintQr(), {}, 'fields-1');
    const prefix = (ok.payload.session_token as string).slice(0, 8);
    await relay.loop.drain();
    const created = readEvents(relay.home).filter((e) => e.type === 'session.created' && e.data.tokenPrefix === prefix)[0];
    expect(created.data).toMatchObject({
      deviceName: 'Pixel 8',
      deviceHostname: 'Pixel 8',
      deviceModel: 'Pixel 8',
      devicePlatform: 'Android 14',
      clientSurface: 'android',
      deviceFormFactor: 'phone',
    });
    const connected = readEvents(relay.home).filter((e) => e.type === 'phone.connected' && e.data.tokenPrefix === prefix)[0];
    expect(connected.data.supports).toEqual({ typed_stream_events: true, event_schema_version: 1 });
    expect(relay.loop.models.connections.supportsOf(prefix)).toEqual({ typed_stream_events: true, event_schema_version: 1 });
    phone.close();
    await phone.closed;
    // The relay records the disconnect when its side of the socket closes, a moment after ours.
    for (let i = 0; i < 100 && relay.loop.models.connections.isOnline(prefix); i++) await new Promise((r) => setTimeout(r, 20));
    expect(relay.loop.models.connections.supportsOf(prefix)).toEqual({});

    // Over-long values are cut, control characters dropped.
    const long = await scanAndPair(await mintQr(), {}, 'fields-2');
    long.phone.close();
    const p2 = await Phone.connect(relay.url);
    const code = appScan(await mintQr())!.relay!.code;
    const ok2 = await p2.auth({
      pairing_code: code,
      device_id: 'fields-3',
      ...appIdentity,
      device_model: `X\u0007${'m'.repeat(500)}`,
      client_surface: 'A'.repeat(100),
    });
    expect(ok2.type).toBe('auth.ok');
    await relay.loop.drain();
    const c2 = readEvents(relay.home)
      .filter((e) => e.type === 'session.created')
      .at(-1)!;
    expect(c2.data.deviceModel).toBe(`X${'m'.repeat(63)}`);
    expect(c2.data.clientSurface).toBe('a'.repeat(32));
    p2.close();
  });

  it('refuses a system/auth whose new fields have the wrong type: auth.fail, no session', async () => {
    for (const bad of [
      { client_surface: 7 },
      { device_form_factor: ['phone'] },
      { ttl_seconds: -5 },
      { ttl_seconds: 1.5 },
      { grants: [1] },
      { grants: { terminal: 'soon' } },
      { supports: 'yes' },
    ]) {
      const code = appScan(await mintQr())!.relay!.code;
      await relay.loop.drain();
      const before = readEvents(relay.home).filter((e) => e.type === 'session.created').length;
      const phone = await Phone.connect(relay.url);
      const res = await phone.auth({ pairing_code: code, device_id: 'bad-fields', ...appIdentity, ...bad });
      expect(res.type).toBe('auth.fail');
      expect(await phone.closed).toBe(4401);
      await relay.loop.drain();
      expect(readEvents(relay.home).filter((e) => e.type === 'session.created').length).toBe(before);
    }
  });

  it('GET /sessions decodes as PairedDeviceInfo (PairedSession.kt:70-96) with the fields the screen shows', async () => {
    const { phone, ok } = await scanAndPair(await mintQr(), {}, 'list-1');
    const token = ok.payload.session_token as string;
    // RelayHttpClient.kt:918-985: Bearer + Accept json; `{"sessions": [...]}`.
    const res = await fetch(`${relay.url}/sessions`, { headers: { ...bearer(token), accept: 'application/json' } });
    expect(res.status).toBe(200);
    const mine = ((await res.json()) as { sessions: Array<Record<string, unknown>> }).sessions.find((s) => s.token_prefix === token.slice(0, 8))!;
    const str = (v: unknown) => typeof v === 'string' || v === null; // String with a default: null coerces to ""
    for (const f of ['device_name', 'device_id', 'device_model', 'device_platform', 'client_surface', 'device_form_factor'])
      expect(str(mine[f])).toBe(true);
    for (const f of ['created_at', 'last_seen', 'first_seen']) expect(typeof mine[f]).toBe('number');
    expect(mine).toMatchObject({
      client_surface: 'android',
      device_form_factor: 'phone',
      device_model: 'Pixel 8',
      device_platform: 'Android 14',
      first_seen: now(),
      is_current: true,
      transport_hint: 'ws',
    });
    phone.close();
  });

  it('Extend (PATCH with a longer TTL) shows "Extending needs a new pairing", and shortening still works', async () => {
    const { phone, ok } = await scanAndPair(await mintQr(), {}, 'extend-1');
    const token = ok.payload.session_token as string;
    const prefix = token.slice(0, 8);
    // RelayHttpClient.kt:1118-1147: a hand-built body, PATCH, Bearer.
    const patch = (body: string) =>
      fetch(`${relay.url}/sessions/${prefix}`, {
        method: 'PATCH',
        headers: { ...bearer(token), accept: 'application/json', 'content-type': 'application/json; charset=utf-8' },
        body,
      });
    await relay.loop.drain();
    const before = relay.loop.lastSeq;
    const ext = await patch(`{"ttl_seconds":${30 * DAY}}`);
    expect(appExtendMessage(ext.status, ext.statusText)).toBe('HTTP 422: Extending needs a new pairing');
    expect(await ext.json()).toMatchObject({ ok: false, code: 'reduction_only', error: expect.stringMatching(/^extending needs a new pairing/) });
    await relay.loop.drain();
    expect(relay.loop.lastSeq).toBe(before);

    const shorter = await patch(`{"ttl_seconds":${DAY}}`);
    expect(shorter.status).toBe(200);
    expect(((await shorter.json()) as { expires_at: number }).expires_at).toBe(now() + DAY);
    phone.close();
  });

  it('per-channel revoke (PairingController.kt:152-200) re-sends every grant from its own clock and works', async () => {
    const { phone, ok } = await scanAndPair(await mintQr(), {}, 'chanrevoke-1');
    const token = ok.payload.session_token as string;
    const prefix = token.slice(0, 8);
    relay.clock.advanceSeconds(10);
    const list = async () =>
      ((await (await fetch(`${relay.url}/sessions`, { headers: bearer(token) })).json()) as { sessions: Array<Record<string, any>> }).sessions.find(
        (s) => s.token_prefix === prefix,
      )!;
    const device = await list();
    // The phone's clock is a little behind the relay's: its seconds-from-now come out one larger than
    // what is left, which must read as "keep this grant", not as extending it.
    const nowSec = now() - 1.5;
    const rebuilt: Record<string, number> = {};
    for (const [ch, exp] of Object.entries(device.grants as Record<string, number | null>)) {
      rebuilt[ch] = ch === 'terminal' ? 1 : exp === null ? 0 : Math.max(1, Math.trunc(exp - nowSec));
    }
    const res = await fetch(`${relay.url}/sessions/${prefix}`, {
      method: 'PATCH',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      body: JSON.stringify({ grants: rebuilt }),
    });
    expect(res.status).toBe(200);
    relay.clock.advanceSeconds(2);
    const after = await list();
    expect(after.grants.terminal).toBeUndefined();
    expect(after.grants.chat).toBe(device.grants.chat);
    phone.close();
  });

  it('reconnects with its session token and the same identity frame; revoking itself answers 200 and closes the socket', async () => {
    const { phone, ok } = await scanAndPair(await mintQr(), {}, 'revoke-1');
    const token = ok.payload.session_token as string;
    phone.close();
    // AuthManager.kt:885-892: session_token, device_id, identity, supports (no refresh token issued yet).
    const again = await Phone.connect(relay.url);
    const ok2 = await again.auth({ session_token: token, device_id: 'revoke-1', ...appIdentity });
    expect(ok2.type).toBe('auth.ok');
    expect(ok2.payload.session_token).toBe(token);
    await relay.loop.drain();
    const updates = () => readEvents(relay.home).filter((e) => e.type === 'session.device_updated' && e.data.tokenPrefix === token.slice(0, 8));
    expect(updates()).toEqual([]); // described itself as before: nothing to record
    again.close();
    await again.closed;
    // Renamed and updated since: the reconnect records what changed, and the list shows it.
    const renamed = await Phone.connect(relay.url);
    const ok3 = await renamed.auth({
      session_token: token,
      device_id: 'revoke-1',
      ...appIdentity,
      device_name: 'Work phone',
      device_platform: 'Android 15',
    });
    expect(ok3.type).toBe('auth.ok');
    await relay.loop.drain();
    expect(updates().map((e) => e.data)).toEqual([{ tokenPrefix: token.slice(0, 8), deviceName: 'Work phone', devicePlatform: 'Android 15' }]);
    const listed = ((await (await fetch(`${relay.url}/sessions`, { headers: bearer(token) })).json()) as { sessions: Array<Record<string, unknown>> })
      .sessions;
    expect(listed.find((x) => x.token_prefix === token.slice(0, 8))).toMatchObject({
      device_name: 'Work phone',
      device_platform: 'Android 15',
      device_model: 'Pixel 8',
    });
    // RelayHttpClient.kt:1023-1040: DELETE; 404 counts as "already gone".
    const del = await fetch(`${relay.url}/sessions/${token.slice(0, 8)}`, {
      method: 'DELETE',
      headers: { ...bearer(token), accept: 'application/json' },
    });
    expect(del.status).toBe(200);
    expect(await del.json()).toMatchObject({ ok: true, revoked: token.slice(0, 8), revoked_self: true });
    expect(await renamed.closed).toBe(4403);
  });
});
