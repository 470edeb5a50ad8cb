import { bearer, Phone, registerCode, type TestRelay } from '../support/harness';
import { startRelay } from './client-relay';

/**
 * The desktop CLI (desktop/src): `pair --code`, `pair --pair-qr '<invite>'`, `devices [list|revoke|extend]`
 * and `status`, replayed with the requests it makes and the fields it reads. `status`
 * (commands/status.ts:40-116) makes no request: it prints what `pair` stored from auth.ok
 * (commands/pair.ts saveSession: server_version, grants, expires_at), which readAuthOk checks below.
 */

type DesktopPayload = {
  hermes: number;
  host: string;
  port: number;
  key: string;
  tls: boolean;
  relay?: { url: string; code?: string; ttl_seconds?: number; transport_hint?: string; grants?: Record<string, number> };
};

/**
 * desktop/src/pairingQr.ts:84-120 + :251-330 decodePairingPayload: an invite is unwrapped only from
 * `hermes-relay://pair?payload=`; otherwise raw JSON, else base64 of JSON. `host` (non-empty) and `key`
 * (a string, "" allowed) are required; relay.url a string, relay.code a string.
 */
function desktopDecode(raw: string): DesktopPayload {
  let text = raw.trim();
  const invite = /hermes-relay:\/\/pair(?:\/([^?\s#]+))?(?:\?([^\s#]+))?/i.exec(text);
  if (invite) text = new URL(invite[0]).searchParams.get('payload') ?? '';
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(text) as Record<string, unknown>;
  } catch {
    if (!/^[A-Za-z0-9+/=_-]+$/.test(text)) throw new Error('pairing payload is neither valid JSON nor base64');
    o = JSON.parse(Buffer.from(text.replaceAll('-', '+').replaceAll('_', '/'), 'base64').toString('utf8')) as Record<string, unknown>;
  }
  const hermes = typeof o.hermes === 'number' ? o.hermes : 1;
  if (hermes < 1) throw new Error('unsupported pairing schema version');
  if (typeof o.host !== 'string' || o.host.length === 0) throw new Error('pairing payload missing `host`');
  if (typeof o.key !== 'string') throw new Error('pairing payload missing `key`');
  const p: DesktopPayload = {
    hermes,
    host: o.host,
    port: typeof o.port === 'number' ? o.port : 8642,
    key: o.key,
    tls: typeof o.tls === 'boolean' ? o.tls : false,
  };
  const r = o.relay as Record<string, unknown> | undefined;
  if (r && typeof r.url === 'string') p.relay = { url: r.url, ...(typeof r.code === 'string' ? { code: r.code } : {}) };
  return p;
}

/** desktop/src/pairingQr.ts:124-137 relayPairingCodeFromPayload. */
function desktopCode(p: DesktopPayload): string {
  const code = p.relay?.code?.trim().toUpperCase() ?? '';
  if (!/^[A-Z0-9]{6}$/.test(code)) throw new Error('pairing invite has no valid relay.code');
  return code;
}

/**
 * desktop/src/transport/RelayTransport.ts:522-569 sendAuth, with desktop/src/deviceIdentity.ts:90-107
 * desktopRelayIdentity (hostname, os.machine(), `${type()} ${release()}`, surface and form factor "desktop").
 */
function desktopAuth(code: { pairing_code: string } | { session_token: string }, deviceId = '0b7a1c9e-5d1f-4c2a-9e3b-7f7d2a6c1e55') {
  return {
    ...code,
    device_name: 'build-box',
    device_hostname: 'build-box',
    device_model: 'x86_64',
    device_platform: 'Linux 6.1.0-18-amd64',
    client_surface: 'desktop',
    device_form_factor: 'desktop',
    device_id: deviceId,
    supports: { typed_stream_events: true, event_schema_version: 1 },
  };
}

describe('compat: the desktop CLI pairs and manages devices', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay();
  });
  afterAll(() => relay.close('test done'));
  const now = () => Math.floor(relay.clock.now().getTime() / 1000);

  /** desktop/src/commands/devices.ts:139-166 jsonFetch: Bearer, Accept json, JSON body when given. */
  const jsonFetch = async (route: string, token: string, method = 'GET', body?: unknown) => {
    const res = await fetch(`${relay.url}${route}`, {
      method,
      headers: { ...bearer(token), Accept: 'application/json', ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Record<string, any> };
  };

  /** auth.ok as RelayTransport.ts:651-700 reads it: session_token, server_version, grants, expires_at, transport_hint. */
  function readAuthOk(payload: Record<string, unknown>) {
    expect(typeof payload.session_token).toBe('string');
    expect(typeof payload.server_version).toBe('string');
    for (const v of Object.values(payload.grants as Record<string, unknown>)) expect(v === null || Number.isFinite(v)).toBe(true);
    expect(payload.expires_at === null || Number.isFinite(payload.expires_at)).toBe(true);
    return payload.session_token as string;
  }

  it('pair --pair-qr with the QR JSON: decodes, takes relay.code, authenticates as a desktop', async () => {
    const mint = (await (
      await fetch(`${relay.url}/pairing/mint`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ host: '127.0.0.1', port: 8642, api_key: '', tls: false, ttl_seconds: 7 * 86_400, transport_hint: 'ws' }),
      })
    ).json()) as { qr_payload: string; pairing_url: string; relay_url: string };
    const p = desktopDecode(mint.qr_payload);
    expect(p.relay?.url).toBe(mint.relay_url);
    // pairingQr.ts unwraps only hermes-relay:// invites (the spec's svc-relay:// spelling is neither JSON
    // nor base64 to it), so the paste form the relay emits is hermes-relay:// and --pair-qr takes it.
    expect(mint.pairing_url.startsWith('hermes-relay://pair?payload=')).toBe(true);
    expect(desktopDecode(mint.pairing_url)).toEqual(p);
    expect(() => desktopDecode(mint.pairing_url.replace(/^hermes-relay/, 'svc-relay'))).toThrow();

    const phone = await Phone.connect(relay.url);
    const ok = await phone.auth(desktopAuth({ pairing_code: desktopCode(p) }));
    expect(ok.type).toBe('auth.ok');
    readAuthOk(ok.payload);
    expect(ok.payload).toMatchObject({ client_surface: 'desktop', device_form_factor: 'desktop', expires_at: now() + 7 * 86_400 });
    phone.close();
  });

  it('pair CODE --remote, then devices / devices revoke / devices extend as the CLI reads them', async () => {
    expect((await registerCode(relay, 'DESK01')).status).toBe(200);
    const phone = await Phone.connect(relay.url);
    const ok = await phone.auth(desktopAuth({ pairing_code: 'desk01' }));
    const token = readAuthOk(ok.payload);
    const prefix = token.slice(0, 8);

    // devices.ts:182-252 listDevices: GET /sessions, status 200, sessions[] of ServerSession (:60-76).
    const list = await jsonFetch('/sessions', token);
    expect(list.status).toBe(200);
    const me = (list.body.sessions as Array<Record<string, any>>).find((s) => s.token_prefix === prefix)!;
    expect(me).toMatchObject({
      device_name: 'build-box',
      device_model: 'x86_64',
      device_platform: 'Linux 6.1.0-18-amd64',
      client_surface: 'desktop',
      device_form_factor: 'desktop',
      first_seen: now(),
      is_current: true,
    });
    // devices.ts:221 the DETAILS column: model · platform · surface.
    expect([me.device_model, me.device_platform, me.client_surface].filter((v) => typeof v === 'string' && v.trim()).join(' · ')).toBe(
      'x86_64 · Linux 6.1.0-18-amd64 · desktop',
    );

    // devices.ts:286-310 extendDevice: PATCH {ttl_seconds} (default 86400). Shorter than 30 days: 200.
    const ext = await jsonFetch(`/sessions/${prefix}`, token, 'PATCH', { ttl_seconds: 86_400 });
    expect(ext.status).toBe(200);
    expect(ext.body.expires_at).toBe(now() + 86_400);
    // Longer: refused; the CLI prints `PATCH ... returned 422: <body>`, whose error says why.
    const longer = await jsonFetch(`/sessions/${prefix}`, token, 'PATCH', { ttl_seconds: 604_800 });
    expect(longer.status).toBe(422);
    expect(longer.body.error).toMatch(/^extending needs a new pairing/);

    // devices.ts:255-283 revokeDevice: 200 with revoked_self; 404 / 409 have their own messages.
    const other = await Phone.connect(relay.url);
    expect((await registerCode(relay, 'DESK02')).status).toBe(200);
    // Another PC: its own per-install id (the same id would replace this session, as a re-pair does).
    const otherToken = readAuthOk((await other.auth(desktopAuth({ pairing_code: 'DESK02' }, '6f1d3a2b-8c4e-4f5a-b6d7-e8f9a0b1c2d3'))).payload);
    expect((await jsonFetch('/sessions/zzzzzzzz', token, 'DELETE')).status).toBe(404);
    const rev = await jsonFetch(`/sessions/${otherToken.slice(0, 8)}`, token, 'DELETE');
    expect(rev.status).toBe(200);
    expect(rev.body.revoked_self).toBe(false);
    const self = await jsonFetch(`/sessions/${prefix}`, token, 'DELETE');
    expect(self.body.revoked_self).toBe(true);
    phone.close();
    other.close();
  });
});
