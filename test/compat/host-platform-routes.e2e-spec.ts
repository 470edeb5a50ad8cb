import { type TestRelay } from '../support/harness';
import { startRelay } from './client-relay';

/**
 * The routes the reference host tools and dashboard plugin call on loopback with no credential (issue 34
 * kept them as `platform` routes; docs/COMPATIBILITY.md, "Platform routes"). Each request is made exactly as
 * the cited client makes it: no Authorization, no X-Operator-Key. By default each must still be answered
 * (not 401, not 403); with RELAY_LOOPBACK_TRUST=key each is 401 `auth.operator_key_required`, as documented.
 */
type HostCall = { client: string; method: 'GET' | 'POST' | 'PATCH'; path: string; body?: unknown; ok: number[] };

const CALLS: HostCall[] = [
  { client: 'plugin/pair.py:926 register_relay_code', method: 'POST', path: '/pairing/register', body: { code: 'HOSTP1' }, ok: [200] },
  { client: 'plugin/pair.py:986 mint_relay_pairing', method: 'POST', path: '/pairing/mint', body: { api_key: '' }, ok: [200] },
  { client: 'plugin/cli.py:489 relay security status', method: 'GET', path: '/relay/security', ok: [200] },
  { client: 'plugin/cli.py:489 relay security off', method: 'PATCH', path: '/relay/security', body: { allow_insecure_api_bearer: false }, ok: [200] },
  // 503 "no phone on the bridge" is the tool's own answer (android_phone_status.py reads it), not a refusal.
  { client: 'plugin/status.py:53, plugin/tools/android_phone_status.py:67', method: 'GET', path: '/bridge/status', ok: [200, 503] },
  { client: 'plugin/dashboard/plugin_api.py:212', method: 'GET', path: '/bridge/activity', ok: [200] },
  { client: 'plugin/dashboard/plugin_api.py:222', method: 'GET', path: '/media/inspect', ok: [200] },
  { client: 'plugin/doctor.py:457, plugin/dashboard/plugin_api.py:197', method: 'GET', path: '/relay/info', ok: [200] },
  { client: 'plugin/tools/android_notifications.py:58', method: 'GET', path: '/notifications/recent?limit=20', ok: [200] },
  {
    client: 'plugin/phone_platform.py:128 (no PHONE_RELAY_TOKEN)',
    method: 'POST',
    path: '/phone/message',
    body: { chat_id: 'c', text: 'hi' },
    ok: [200],
  },
  { client: 'plugin/phone_platform.py:129 (no PHONE_RELAY_TOKEN)', method: 'GET', path: '/phone/replies?wait=0', ok: [200] },
  { client: 'plugin/dashboard/plugin_api.py:235', method: 'GET', path: '/context/injected', ok: [200] },
  // 503: no desktop client connected, the tool's own "not ready" (desktop_tool.py:202 reads it).
  { client: 'plugin/tools/desktop_tool.py:202 (no token configured)', method: 'GET', path: '/desktop/_ping', ok: [200, 503] },
];

async function hostCall(relay: TestRelay, c: HostCall): Promise<{ status: number; code?: string }> {
  const res = await fetch(`${relay.url}${c.path}`, {
    method: c.method,
    headers: c.body !== undefined ? { 'content-type': 'application/json' } : {},
    body: c.body !== undefined ? JSON.stringify(c.body) : undefined,
  });
  const text = await res.text();
  let code: string | undefined;
  try {
    code = (JSON.parse(text) as { code?: string }).code;
  } catch {
    code = undefined;
  }
  return { status: res.status, code };
}

describe('compat: the host tools call their platform routes with no credential', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay({ env: { PHONE_ENABLED: '1' } });
  });
  afterAll(() => relay.close('test done'));

  it.each(CALLS.map((c) => [c.client, c] as const))('%s: answered by default', async (_client, c) => {
    const r = await hostCall(relay, c);
    expect([c.path, c.ok.includes(r.status) ? 'answered' : `${r.status} ${r.code}`]).toEqual([c.path, 'answered']);
  });
});

describe('compat: the same calls under RELAY_LOOPBACK_TRUST=key', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay({ env: { PHONE_ENABLED: '1', RELAY_LOOPBACK_TRUST: 'key' } });
  });
  afterAll(() => relay.close('test done'));

  it('each is 401 auth.operator_key_required: the host needs the key or a token there (docs/COMPATIBILITY.md)', async () => {
    for (const c of CALLS) expect([c.path, await hostCall(relay, c)]).toEqual([c.path, { status: 401, code: 'auth.operator_key_required' }]);
  });
});
