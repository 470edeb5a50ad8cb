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
      { name: 'home', relay_state: 'absent' },
      { name: 'work', relay_state: 'absent' },
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

describe('GET /relay/update-check (works offline; an optional feed)', () => {
  it('without a feed says the state is unknown in a way the app does not show as "up to date", never an error status', async () => {
    const relay = await startRelay();
    try {
      const r = await call(relay, 'GET', '/relay/update-check');
      expect(r).toMatchObject({
        status: 200,
        body: { current: '', running_version: '0.1.0', latest: null, update_available: false, update_command: null, status: 'unknown' },
      });
      expect(r.body.reason).toContain('RELAY_UPDATE_FEED_URL');
      // The app's two readings (AboutScreen.kt 308-312, DiagnosticsScreen.kt 710-725): not "up to date", not a failed check.
      const about = r.body.update_available && r.body.latest ? 'update available' : r.body.current ? 'up to date' : 'connected';
      const diagnostics = r.body.error ? 'check error' : !r.body.current ? 'version unknown' : 'current';
      expect([about, diagnostics]).toEqual(['connected', 'version unknown']);
      expect((await call(relay, 'GET', '/relay/update-check', undefined, REMOTE)).status).toBe(401);
    } finally {
      await relay.close();
    }
  });

  it('reads a feed, keeps its answer an hour (refresh=1 asks again), and degrades a broken feed to "unknown"', async () => {
    const http = await import('node:http');
    let latest = '0.2.0';
    let hits = 0;
    let broken = false;
    const feed = http.createServer((_req, res) => {
      hits++;
      if (broken) {
        res.statusCode = 500;
        return res.end('no');
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ latest, update_command: 'npm install && npm start' }));
    });
    await new Promise<void>((r) => feed.listen(0, '127.0.0.1', r));
    const relay = await startRelay({
      env: { RELAY_UPDATE_FEED_URL: `http://127.0.0.1:${(feed.address() as import('node:net').AddressInfo).port}/latest.json` },
    });
    try {
      const p = await pairPhone(relay);
      p.phone.close();
      const first = await call(relay, 'GET', '/relay/update-check', undefined, { ...REMOTE, ...bearer(p.token) });
      expect(first.body).toMatchObject({
        current: '0.1.0',
        latest: '0.2.0',
        update_available: true,
        update_command: 'npm install && npm start',
        status: 'behind',
      });
      latest = '0.1.0';
      expect((await call(relay, 'GET', '/relay/update-check')).body.latest).toBe('0.2.0');
      expect(hits).toBe(1);
      expect((await call(relay, 'GET', '/relay/update-check?refresh=1')).body).toMatchObject({
        latest: '0.1.0',
        update_available: false,
        status: 'current',
      });
      broken = true;
      relay.clock.advance(3_600_001);
      const down = await call(relay, 'GET', '/relay/update-check');
      expect(down).toMatchObject({ status: 200, body: { current: '0.1.0', update_available: false, status: 'unknown' } });
      expect(down.body.error).toContain('500');
    } finally {
      await relay.close();
      await new Promise((r) => feed.close(r));
    }
  });
});

describe('POST /relay/model-capabilities (spec 4.10, rows of 2.5)', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay();
  });
  afterAll(() => relay.close());
  const ask = (body: unknown, headers: Record<string, string> = {}) => call(relay, 'POST', '/relay/model-capabilities', body, headers);

  it('answers one row per pair in order: exact adapters where known, the advisory fallback otherwise', async () => {
    const r = await ask({
      schema_version: 1,
      profile: 'work',
      refresh: false,
      models: [
        { provider: 'openai', model: 'gpt-4o' },
        { provider: 'OpenAI', model: 'o3-mini' },
        { provider: 'deepseek', model: 'deepseek-reasoner' },
        { provider: 'someone', model: 'mystery-1' },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ schema_version: 1, contract_version: '1.0' });
    expect(r.body.capabilities).toEqual([
      { provider: 'openai', model: 'gpt-4o', reasoning: false, reasoning_efforts: [], reasoning_efforts_exact: true, source: 'provider-adapter' },
      {
        provider: 'OpenAI',
        model: 'o3-mini',
        reasoning: true,
        reasoning_efforts: ['low', 'medium', 'high'],
        reasoning_efforts_exact: true,
        source: 'provider-adapter',
      },
      {
        provider: 'deepseek',
        model: 'deepseek-reasoner',
        reasoning: true,
        reasoning_efforts: ['none', 'low', 'medium', 'high', 'max'],
        reasoning_efforts_exact: true,
        source: 'provider-adapter',
      },
      {
        provider: 'someone',
        model: 'mystery-1',
        reasoning: true,
        reasoning_efforts: ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max', 'ultra'],
        reasoning_efforts_exact: false,
        source: 'canonical-fallback',
      },
    ]);
  });

  it('refuses bad requests with 400 (65 pairs, none, schema 2, malformed pairs), and needs loopback or the chat grant', async () => {
    const pair = { provider: 'p', model: 'm' };
    for (const body of [
      { schema_version: 1, models: Array.from({ length: 65 }, () => pair) },
      { schema_version: 1, models: [] },
      { schema_version: 2, models: [pair] },
      { schema_version: null, models: [pair] },
      { schema_version: 1, models: [{ provider: '', model: 'm' }] },
      { schema_version: 1, models: [{ provider: 'p', model: 'm'.repeat(513) }] },
      { schema_version: 1, models: ['x'] },
      { schema_version: 1, profile: 'x'.repeat(129), models: [pair] },
      { schema_version: 1, profile: 'a\nb', models: [pair] },
    ])
      expect([body, (await ask(body)).status]).toEqual([body, 400]);
    // The app never sends schema_version (kotlinx leaves a default out): absent is 1 (test/compat/app-requests).
    expect((await ask({ models: [pair] })).body).toMatchObject({ schema_version: 1, capabilities: [{ provider: 'p', model: 'm' }] });
    expect((await ask({ schema_version: 1, models: Array.from({ length: 64 }, () => pair) })).body.capabilities).toHaveLength(64);
    const withChat = await pairPhone(relay);
    withChat.phone.close();
    expect((await ask({ schema_version: 1, models: [pair] }, { ...REMOTE, ...bearer(withChat.token) })).status).toBe(200);
    const noChat = await pairPhone(relay, { terms: { grants: { chat: false } } });
    noChat.phone.close();
    expect((await ask({ schema_version: 1, models: [pair] }, { ...REMOTE, ...bearer(noChat.token) })).status).toBe(403);
    expect((await ask({ schema_version: 1, models: [pair] }, REMOTE)).status).toBe(401);
  });
});
