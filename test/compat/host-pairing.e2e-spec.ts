import * as path from 'node:path';
import { canonicalJson, decodePairing } from '../../apps/relay/src/pairing/qr-payload';
import { Secrets } from '../../apps/relay/src/common/auth/secrets';
import { Phone, readEvents, type TestRelay } from '../support/harness';
import { startRelay } from './client-relay';

/**
 * The agent host's pair command, as plugin/pair.py sends it. Its helpers treat anything but a 200 with
 * `ok: true` as "relay pairing unavailable" and silently fall back to a chat-only QR, so every field it
 * sends must be accepted and every field it reads must be there, typed as it reads them.
 */
describe('compat: the host pair command (plugin/pair.py)', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay();
  });
  afterAll(() => relay.close('test done'));
  const now = () => Math.floor(relay.clock.now().getTime() / 1000);

  /** urllib.request with Content-Type application/json, json.dumps(body) (pair.py:934-941, 985-990). */
  const post = (route: string, body: unknown) =>
    fetch(`${relay.url}${route}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

  describe('register_relay_code (pair.py:903-948) and register_code_command (pair.py:1176-1284)', () => {
    it('accepts {code, ttl_seconds, grants, transport_hint} and answers 200 {ok: true}', async () => {
      // pair.py:926-933: grants from parse_grants (channel -> int seconds, 0 = never), hint "ws" or "wss".
      const body = { code: 'HOST01', ttl_seconds: 2_592_000, grants: { terminal: 86_400, bridge: 0 }, transport_hint: 'ws' };
      const res = await post('/pairing/register', body);
      // pair.py:942-945: `resp.status != 200` is failure; then `bool(data.get("ok"))`.
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ ok: true, code: 'HOST01' });

      const phone = await Phone.connect(relay.url);
      const ok = await phone.auth({ pairing_code: 'HOST01', device_id: 'host-register-phone' });
      expect(ok.type).toBe('auth.ok');
      expect(ok.payload.expires_at).toBe(now() + 2_592_000);
      // 0 from parse_grants("never") means "as long as the session".
      expect(ok.payload.grants).toMatchObject({ terminal: now() + 86_400, bridge: now() + 2_592_000 });
      expect(ok.payload.transport_hint).toBe('ws');
      phone.close();
    });

    it('the bare form {code} (register_code_command without --grants) works too', async () => {
      const res = await post('/pairing/register', { code: 'host02', ttl_seconds: 2_592_000, transport_hint: 'ws' });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { ok: boolean }).ok).toBe(true);
    });
  });

  describe('mint_relay_pairing (pair.py:951-1010), as pair_command calls it (pair.py:1401-1424)', () => {
    // pair.py:972-985: always host, port, api_key, tls, ttl_seconds, transport_hint; grants, endpoints and
    // dashboard_url only when set. api_key is read_server_config()'s key, "" when none is configured.
    const hostBody = {
      host: '192.168.1.50',
      port: 8642,
      api_key: '',
      tls: false,
      ttl_seconds: 2_592_000,
      transport_hint: 'ws',
    };

    it('accepts api_key "" and answers qr_payload as a JSON string holding a relay object', async () => {
      const res = await post('/pairing/mint', hostBody);
      // pair.py:991-997: status 200 and result["ok"] is True, else None (a chat-only QR).
      expect(res.status).toBe(200);
      const result = (await res.json()) as Record<string, unknown>;
      expect(result.ok).toBe(true);
      // pair.py:998-1002: qr_payload and pairing_url must both be str.
      expect(typeof result.qr_payload).toBe('string');
      expect(typeof result.pairing_url).toBe('string');
      // pair.py:1004-1010: json.loads(qr_payload) is a dict whose "relay" is a dict.
      const parsed = JSON.parse(result.qr_payload as string) as Record<string, any>;
      expect(parsed.relay).toEqual({ url: result.relay_url, code: result.code, ttl_seconds: 2_592_000, transport_hint: 'ws' });
      // pair.py:1097-1099 (render_text_block) reads relay["url"] and relay["code"] and relay.get("ttl_seconds").
      expect(typeof parsed.relay.url).toBe('string');
      expect(parsed.relay.code).toMatch(/^[A-Z0-9]{6}$/);
      // The API server the host described goes to the top level, key "" included (what the app reads).
      expect(parsed).toMatchObject({ host: '192.168.1.50', port: 8642, key: '', tls: false });
      expect(result).toMatchObject({ host: '192.168.1.50', port: 8642, tls: false, expires_at: now() + 600 });
      // The paste-able URL wraps the same JSON.
      expect(result.pairing_url).toMatch(/^hermes-relay:\/\/pair\?payload=[A-Za-z0-9_-]+$/);
      expect(decodePairing(result.pairing_url as string)).toEqual(parsed);
    });

    it('signs the QR: HMAC-SHA-256 over the canonical JSON without sig, standard base64 (plugin/relay/qr_sign.py)', async () => {
      const result = (await (await post('/pairing/mint', { ...hostBody, dashboard_url: 'http://192.168.1.50:9119/' })).json()) as Record<string, any>;
      const parsed = JSON.parse(result.qr_payload as string) as Record<string, any>;
      expect(parsed.sig).toMatch(/^[A-Za-z0-9+/]{43}=$/);
      const { sig, ...unsigned } = parsed;
      const secrets = Secrets.load(path.join(relay.home, 'relay'));
      expect(Buffer.from(secrets.mac('qr', canonicalJson(unsigned)), 'base64url').toString('base64')).toBe(sig);
      // pair.py strips a trailing slash from dashboard_url; so does the relay.
      expect(parsed.dashboard_url).toBe('http://192.168.1.50:9119');
      expect(result.dashboard_url).toBe('http://192.168.1.50:9119');
    });

    it('carries grants and endpoints as sent, signed, and mirrors endpoints back', async () => {
      // pair.py:336-351 (_lan_endpoint) shape; order is significant and kept.
      const endpoints = [
        {
          role: 'lan',
          priority: 0,
          api: { host: '192.168.1.50', port: 8642, tls: false },
          relay: { url: 'ws://192.168.1.50:8767', transport_hint: 'ws' },
        },
        {
          role: 'tailscale',
          priority: 1,
          api: { host: 'box.tail1234.ts.net', port: 8642, tls: true },
          relay: { url: 'wss://box.tail1234.ts.net:8767', transport_hint: 'wss' },
        },
      ];
      const res = await post('/pairing/mint', { ...hostBody, grants: { terminal: 86_400, bridge: 3600 }, endpoints });
      expect(res.status).toBe(200);
      const result = (await res.json()) as Record<string, any>;
      const parsed = JSON.parse(result.qr_payload as string) as Record<string, any>;
      expect(parsed.endpoints).toEqual(endpoints);
      expect(result.endpoints).toEqual(endpoints);
      expect(parsed.relay.grants).toMatchObject({ terminal: 86_400, bridge: 3600, chat: 0 });
      // The version key in the public clients' spelling (pair.py writes `hermes`; the app defaults it to 1).
      expect(parsed.hermes).toBe(3);
      expect(parsed).not.toHaveProperty('svc');

      const phone = await Phone.connect(relay.url);
      const ok = await phone.auth({ pairing_code: parsed.relay.code, device_id: 'host-mint-phone' });
      expect(ok.payload.grants).toMatchObject({ terminal: now() + 86_400, bridge: now() + 3600 });
      phone.close();
    });

    it('the API key reaches the QR only: never the event log or the relay log', async () => {
      const res = await post('/pairing/mint', { ...hostBody, api_key: 'sk-host-secret-123' });
      expect(JSON.parse(((await res.json()) as { qr_payload: string }).qr_payload).key).toBe('sk-host-secret-123');
      await relay.loop.drain();
      expect(JSON.stringify(readEvents(relay.home)).includes('sk-host-secret-123')).toBe(false);
      expect(relay.logs.join('\n').includes('sk-host-secret-123')).toBe(false);
    });

    it('refuses malformed host fields with a clean 400 and writes nothing', async () => {
      await relay.loop.drain();
      const before = relay.loop.lastSeq;
      for (const bad of [
        { ...hostBody, port: 'eighty' },
        { ...hostBody, tls: 'yes' },
        { ...hostBody, host: 'a b' },
        { ...hostBody, api_key: 'two words' },
        { ...hostBody, endpoints: 'lan' },
        { ...hostBody, endpoints: [{ priority: 0 }] },
      ]) {
        const res = await post('/pairing/mint', bad);
        expect(res.status).toBe(400);
        expect(await res.json()).toMatchObject({ ok: false, code: expect.any(String) });
      }
      await relay.loop.drain();
      // The types, not just the count: a failure names what was written.
      expect(
        readEvents(relay.home)
          .filter((e) => e.seq > before && e.type !== 'phone.disconnected') // an earlier test's phone socket may close late under load
          .map((e) => e.type),
      ).toEqual([]);
    });
  });
});
