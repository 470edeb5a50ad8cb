import * as fs from 'node:fs';
import * as path from 'node:path';
import { bearer, pairPhone, startRelay, tempHome, type TestRelay } from '../support/harness';
import { call, REMOTE } from '../support/http';

describe('GET /relay/info (spec 4.10; also read by the app with its bearer)', () => {
  let relay: TestRelay;
  let token: string;
  beforeAll(async () => {
    const home = tempHome();
    for (const name of ['work', 'home', '.hidden']) {
      fs.mkdirSync(path.join(home, 'profiles', name), { recursive: true });
      fs.writeFileSync(path.join(home, 'profiles', name, 'config.yaml'), 'model: x\n');
    }
    fs.mkdirSync(path.join(home, 'profiles', 'empty'), { recursive: true });
    relay = await startRelay({ home, env: { API_SERVER_KEY: 'info-api-key-0123456789' } });
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
  });
  afterAll(() => relay.close());

  it('answers loopback with the version, capabilities, profiles, uptime and counts, and nothing secret', async () => {
    relay.clock.advance(90_000);
    const r = await call(relay, 'GET', '/relay/info');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      version: '0.1.0',
      plugin_version: '0.1.0',
      protocol_version: 1,
      health: 'ok',
      session_count: 1,
      paired_device_count: 1,
      pending_commands: 0,
      media_entry_count: 0,
      gateway_heartbeat: { status: 'missing', supported: false },
    });
    expect(r.body.uptime_seconds).toBeGreaterThanOrEqual(90);
    expect(r.body.capabilities).toEqual(expect.arrayContaining(['bridge', 'media', 'relay_voice', 'terminal']));
    expect(r.body.profiles).toEqual([
      { name: 'home', relay_state: 'available' },
      { name: 'work', relay_state: 'available' },
    ]);
    const text = JSON.stringify(r.body);
    expect(text).not.toContain(token);
    expect(text).not.toContain('info-api-key');
    expect(text).not.toContain(relay.home);
  });

  it('answers a paired phone (the app asks with its bearer); other remote callers get 401, the API key too', async () => {
    expect((await call(relay, 'GET', '/relay/info', undefined, { ...REMOTE, ...bearer(token) })).status).toBe(200);
    expect((await call(relay, 'GET', '/relay/info', undefined, REMOTE)).status).toBe(401);
    expect((await call(relay, 'GET', '/relay/info', undefined, { ...REMOTE, ...bearer('info-api-key-0123456789') })).status).toBe(401);
  });
});
