import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import WebSocket from 'ws';
import { bearer, pairPhone, readEvents, startRelay, tempHome, type TestRelay, operatorHeaderFor } from '../support/harness';
import { call, operatorFetch } from '../support/http';
import { solidPng } from '../support/png';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

jest.setTimeout(60_000);

const API_KEY = 'api-key-for-console-voice-0123456789';
const SPOKEN = 'The quick console test speaks these exact words';

/** node:http, because fetch will not send a Host header of our choosing. */
function raw(url: string, method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: { ...operatorHeaderFor(url), ...headers } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function until(pred: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A console route refused to a foreign Host, a foreign Origin, a proxied caller and a LAN peer, writing nothing. */
async function expectLoopbackOnly(relay: TestRelay, method: 'GET' | 'POST', route: string, body = '{}'): Promise<void> {
  await relay.loop.drain();
  const before = relay.loop.lastSeq;
  const json = { 'content-type': 'application/json' };
  const foreign: Array<Record<string, string>> = [{ host: 'evil.example' }, { origin: 'http://evil.example' }, { 'x-forwarded-for': '203.0.113.9' }];
  for (const headers of foreign) {
    const res = await raw(`${relay.url}${route}`, method, { ...json, ...headers }, method === 'POST' ? body : undefined);
    expect([route, JSON.stringify(headers), res.status, res.body?.code]).toEqual([route, JSON.stringify(headers), 403, 'auth.loopback_only']);
  }
  const lan = await relay.app
    .getHttpAdapter()
    .getInstance()
    .inject({ method, url: route, remoteAddress: '192.168.1.20', headers: json, ...(method === 'POST' ? { payload: body } : {}) });
  expect([route, lan.statusCode]).toEqual([route, 403]);
  if (method === 'POST') {
    const form = await raw(`${relay.url}${route}`, 'POST', { 'content-type': 'text/plain' }, body);
    expect([route, form.status, form.body.code]).toEqual([route, 415, 'unsupported_media_type']);
  }
  await relay.loop.drain();
  expect(relay.loop.lastSeq).toBe(before);
}

describe('console Voice page (/console/api/voice)', () => {
  let relay: TestRelay;
  let token: string;
  beforeAll(async () => {
    relay = await startRelay({ env: { VOICE_TOOLS_OPENAI_KEY: '', OPENAI_API_KEY: '', API_SERVER_KEY: API_KEY } });
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
  });
  afterAll(() => relay.close());

  it('names each provider, whether it can serve and why not, and what each section uses', async () => {
    const v = await call(relay, 'GET', '/console/api/voice');
    expect(v.status).toBe(200);
    const byId = Object.fromEntries(v.body.providers.map((p: any) => [p.provider, p]));
    expect(byId.offline).toMatchObject({ available: true, unavailable_reason: null, realtime: false });
    expect(byId.offline.default_for).toEqual(['voice_output', 'realtime_voice', 'realtime_agent', 'synthesize', 'transcribe']);
    expect(byId.openai).toMatchObject({ available: false, realtime: true, default_for: [] });
    expect(byId.openai.unavailable_reason).toMatch(/VOICE_TOOLS_OPENAI_KEY or OPENAI_API_KEY/);
    expect(v.body.sections.map((s: any) => [s.section, s.enabled, s.provider, s.available, s.forced_by_env])).toEqual([
      ['voice_output', true, 'offline', true, false],
      ['realtime_voice', false, 'offline', true, false],
      ['realtime_agent', false, 'offline', true, false],
    ]);
    expect(v.body.calls_default).toEqual({
      synthesize: { provider: 'offline', available: true, unavailable_reason: null },
      transcribe: { provider: 'offline', available: true, unavailable_reason: null },
    });
    expect(v.body.security).toEqual({ allow_insecure_api_bearer: false, api_key_configured: true, tls: false, trust_proxy_headers: false });
    expect(v.body.usage.phones_may_read).toBe(false);
  });

  it('a session shows waiting, connected while its socket is open, then ended with its reason; a call shows its latency, never its text', async () => {
    const created = await call(relay, 'POST', '/voice/output/session', {}, bearer(token));
    const id = created.body.session_id as string;
    const open = async () => (await call(relay, 'GET', '/console/api/voice')).body.open_sessions.find((s: any) => s.session_id === id);
    expect(await open()).toMatchObject({
      kind: 'output',
      state: 'waiting',
      provider: 'offline',
      via: 'session',
      actor: `device:${token.slice(0, 8)}`,
    });
    const ws = new WebSocket(`${relay.url.replace('http', 'ws')}/voice/output/${id}`, { headers: bearer(token) });
    await new Promise((r) => ws.once('message', r));
    expect((await open()).state).toBe('connected');
    ws.close(1000);
    const deadline = Date.now() + 10_000;
    let ended: any;
    while (!ended && Date.now() < deadline) {
      ended = (await call(relay, 'GET', '/console/api/voice')).body.ended_sessions.find((s: any) => s.session_id === id);
      if (!ended) await new Promise((r) => setTimeout(r, 20));
    }
    expect(ended).toMatchObject({ kind: 'output', provider: 'offline', reason: 'closed_before_response', drops: 0, resumes: 0 });

    const synth = await fetch(`${relay.url}/voice/synthesize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(API_KEY) },
      body: JSON.stringify({ text: SPOKEN }),
    });
    expect(synth.status).toBe(200);
    const v = await call(relay, 'GET', '/console/api/voice');
    expect(v.body.calls[0]).toMatchObject({ kind: 'synthesize', provider: 'offline', via: 'api', actor: 'api', outcome: 'ok', chars: SPOKEN.length });
    expect(v.body.calls[0].latency_ms).toEqual(expect.any(Number));
    expect(v.body.calls[0].bytes).toBeGreaterThan(1000);
    expect(JSON.stringify(v.body)).not.toContain('quick console');
    expect(JSON.stringify(v.body)).not.toContain(API_KEY);
    expect(v.body.usage.rows).toEqual([expect.objectContaining({ provider: 'offline', profile: 'default', syntheses: 1, sessions: 1 })]);
  });

  it("turns a section's relay-wide switch off and on as the operator: the phone's session is refused meanwhile", async () => {
    const off = await call(relay, 'POST', '/console/api/voice/sections/voice_output', { enabled: false });
    expect(off).toMatchObject({ status: 200, body: { ok: true, section: 'voice_output', enabled: false, changed: true } });
    const e = readEvents(relay.home).at(-1)!;
    expect(e).toMatchObject({
      type: 'voice.settings_changed',
      actor: 'operator',
      data: { section: 'voice_output', scope: 'relay', changed: { enabled: false } },
    });
    const refused = await call(relay, 'POST', '/voice/output/session', {}, bearer(token));
    expect(refused).toMatchObject({ status: 404, body: { code: 'voice.output_disabled' } });
    const again = await call(relay, 'POST', '/console/api/voice/sections/voice_output', { enabled: false });
    expect(again.body).toMatchObject({ enabled: false, changed: false });
    const on = await call(relay, 'POST', '/console/api/voice/sections/voice_output', { enabled: true });
    expect(on.body).toMatchObject({ enabled: true, changed: true });
    expect((await call(relay, 'POST', '/voice/output/session', {}, bearer(token))).status).toBe(200);
  });

  it('turns the API-bearer escape hatch on and off, recorded with the operator as actor', async () => {
    const on = await call(relay, 'POST', '/console/api/voice/security', { allow_insecure_api_bearer: true });
    expect(on).toMatchObject({ status: 200, body: { ok: true, allow_insecure_api_bearer: true } });
    expect(readEvents(relay.home).at(-1)).toMatchObject({
      type: 'relay.security_changed',
      actor: 'operator',
      data: { allowInsecureApiBearer: true, previous: false },
    });
    expect((await call(relay, 'GET', '/relay/security')).body.allow_insecure_api_bearer).toBe(true);
    expect((await call(relay, 'POST', '/console/api/voice/security', { allow_insecure_api_bearer: false })).body.allow_insecure_api_bearer).toBe(
      false,
    );
  });

  it('refuses bad bodies and sections with a code, writing nothing', async () => {
    await relay.loop.drain();
    const before = relay.loop.lastSeq;
    const cases: Array<[string, unknown, number, string, RegExp?]> = [
      ['/sections/voice_output', {}, 400, 'console.bad_body', /send \{"enabled": true\|false\}/],
      ['/sections/voice_output', { enabled: 'yes' }, 400, 'console.bad_body'],
      ['/sections/voice_output', { enabled: true, provider: 'openai' }, 400, 'console.bad_body', /unknown field "provider"/],
      ['/sections/voice_output', [true], 400, 'console.bad_body'],
      ['/sections/voice_output', null, 400, 'console.bad_body'],
      ['/sections/nope', { enabled: true }, 400, 'voice.unknown_section', /voice_output, realtime_voice, realtime_agent/],
      ['/security', { allow_insecure_api_bearer: 1 }, 400, 'console.bad_body'],
      ['/security', { allow_insecure_api_bearer: true, trust_proxy_headers: true }, 400, 'console.bad_body', /trust_proxy_headers/],
    ];
    for (const [route, body, status, code, message] of cases) {
      const r = await call(relay, 'POST', `/console/api/voice${route}`, body);
      expect([route, JSON.stringify(body), r.status, r.body.ok, r.body.code]).toEqual([route, JSON.stringify(body), status, false, code]);
      if (message) expect(r.body.error).toMatch(message);
    }
    const broken = await raw(`${relay.url}/console/api/voice/security`, 'POST', { 'content-type': 'application/json' }, '{"allow_insecure');
    expect(broken.status).toBe(400);
    await relay.loop.drain();
    expect(relay.loop.lastSeq).toBe(before);
    expect(relay.logs.join('')).not.toContain('"statusCode":500');
  });

  it('answers only a local browser on this relay', async () => {
    await expectLoopbackOnly(relay, 'GET', '/console/api/voice');
    await expectLoopbackOnly(relay, 'POST', '/console/api/voice/sections/voice_output', '{"enabled":false}');
    await expectLoopbackOnly(relay, 'POST', '/console/api/voice/security', '{"allow_insecure_api_bearer":true}');
  });
});

describe('console Voice page with RELAY_REALTIME_VOICE_ENABLED=1', () => {
  it('says the realtime sections are kept on by the environment, and refuses to turn one off (409)', async () => {
    const relay = await startRelay({ env: { RELAY_REALTIME_VOICE_ENABLED: '1', VOICE_TOOLS_OPENAI_KEY: '', OPENAI_API_KEY: '' } });
    try {
      const v = await call(relay, 'GET', '/console/api/voice');
      expect(v.body.sections.map((s: any) => [s.section, s.enabled, s.forced_by_env])).toEqual([
        ['voice_output', true, false],
        ['realtime_voice', true, true],
        ['realtime_agent', true, true],
      ]);
      const off = await call(relay, 'POST', '/console/api/voice/sections/realtime_voice', { enabled: false });
      expect(off).toMatchObject({ status: 409, body: { ok: false, code: 'voice.switch_forced_by_env' } });
      expect(off.body.error).toMatch(/unset it and restart/);
    } finally {
      await relay.close();
    }
  });
});

/** A service home with the default profile and `work` (SOUL, skills, memory, an avatar, an API server with a key in its .env). */
function profileHome(): string {
  const home = tempHome();
  const work = path.join(home, 'profiles', 'work');
  fs.mkdirSync(path.join(work, 'skills', 'coding', 'refactor'), { recursive: true });
  fs.mkdirSync(path.join(work, 'memories'), { recursive: true });
  fs.writeFileSync(
    path.join(work, 'config.yaml'),
    'description: Work persona\nmodel:\n  default: gpt-5\n  provider: openai\nplatforms:\n  api_server:\n    enabled: true\n    port: 1\n',
  );
  fs.writeFileSync(path.join(work, '.env'), 'API_SERVER_KEY=sk-profile-api-key-never-shown\n');
  fs.writeFileSync(path.join(work, 'SOUL.md'), '# Work soul\nBe brief and exact.\n');
  fs.writeFileSync(path.join(work, 'skills', 'coding', 'refactor', 'SKILL.md'), '---\ndescription: Refactor\n---\n');
  fs.writeFileSync(path.join(work, 'memories', 'people.md'), 'Ana likes tea.');
  fs.writeFileSync(path.join(work, 'avatar.png'), solidPng(8, 8));
  fs.writeFileSync(path.join(home, 'config.yaml'), 'model: local-llama\nplugins:\n  enabled: [svc-relay]\n');
  return home;
}

describe('console Profiles page (/console/api/profiles)', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay({ home: profileHome() });
  });
  afterAll(() => relay.close());

  it('lists the catalog as phones see it: model, provider, skills, SOUL, avatar, API server, relay enablement; never a key or the SOUL text', async () => {
    const v = await call(relay, 'GET', '/console/api/profiles');
    expect(v.status).toBe(200);
    expect(v.body).toMatchObject({ discovery: true, offered: 2, home: relay.home });
    expect(v.body.profiles).toEqual([
      expect.objectContaining({ name: 'default', is_default: true, relay: 'enabled', offered: true, model: 'local-llama', has_soul: false }),
      {
        name: 'work',
        is_default: false,
        relay: 'absent',
        offered: true,
        readable: true,
        config_file: path.join(relay.home, 'profiles', 'work', 'config.yaml'),
        model: 'gpt-5',
        provider: 'openai',
        description: 'Work persona',
        has_soul: true,
        skill_count: 1,
        has_avatar: true,
        // The address phones are given: the agent API's host (RELAY_WEBAPI_URL) for a loopback one.
        api_server: { enabled: true, url: expect.stringMatching(/^http:\/\/[^/]+:1$/), key_present: true, running: false },
      },
    ]);
    expect(JSON.stringify(v.body)).not.toContain('sk-profile-api-key');
    expect(JSON.stringify(v.body)).not.toContain('Be brief');
  });

  it('reads SOUL and memory with their ETags; an edit with the ETag writes as the operator, a stale one is 412 and writes nothing', async () => {
    const soul = await call(relay, 'GET', '/console/api/profiles/work/soul');
    expect(soul.body.soul).toMatchObject({ path: 'SOUL.md', content: '# Work soul\nBe brief and exact.\n', exists: true, truncated: false });
    const etag = soul.body.soul.etag as string;
    expect(etag).toMatch(/^"sha256:[0-9a-f]{32}"$/);
    const edit = await call(relay, 'POST', '/console/api/profiles/work/soul', { content: '# Work soul\nBe kind.\n', if_match: etag });
    expect(edit).toMatchObject({ status: 200, body: { ok: true, profile: 'work', path: 'SOUL.md', bytes_written: 21 } });
    expect(edit.body.etag).not.toBe(etag);
    expect(fs.readFileSync(path.join(relay.home, 'profiles', 'work', 'SOUL.md'), 'utf8')).toBe('# Work soul\nBe kind.\n');
    expect(
      readEvents(relay.home)
        .filter((e) => e.type === 'profile.file_written')
        .at(-1),
    ).toMatchObject({
      actor: 'operator',
      data: { profile: 'work', file: 'SOUL.md', bytes: 21, replaced: true },
    });
    // The write makes the catalog rescan (the row's SOUL changed): wait for that before counting.
    await until(() => readEvents(relay.home).some((e) => e.type === 'profile.catalog_changed' && e.data.reason === 'file_written'));
    await relay.loop.drain();
    const before = relay.loop.lastSeq;
    const stale = await call(relay, 'POST', '/console/api/profiles/work/soul', { content: 'overwrite', if_match: etag });
    expect(stale).toMatchObject({ status: 412, body: { ok: false, code: 'profile.stale', etag: edit.body.etag } });
    expect(stale.body.error).toMatch(/changed since it was read/);
    const created = await call(relay, 'POST', '/console/api/profiles/work/soul', { content: 'overwrite', if_match: null });
    expect(created).toMatchObject({ status: 412, body: { code: 'profile.stale' } });
    expect(created.body.error).toMatch(/was created since it was read/);
    await relay.loop.drain();
    expect(relay.loop.lastSeq).toBe(before);
    expect(fs.readFileSync(path.join(relay.home, 'profiles', 'work', 'SOUL.md'), 'utf8')).toBe('# Work soul\nBe kind.\n');

    const memory = await call(relay, 'GET', '/console/api/profiles/work/memory');
    expect(memory.body.entries).toEqual([
      expect.objectContaining({ filename: 'people.md', content: 'Ana likes tea.', etag: expect.stringMatching(/^"sha256:/) }),
    ]);
    const fresh = await call(relay, 'POST', '/console/api/profiles/work/memory/projects.md', { content: 'Relay console.', if_match: null });
    expect(fresh).toMatchObject({ status: 200, body: { path: 'memories/projects.md', bytes_written: 14 } });
    expect(readEvents(relay.home).at(-1)).toMatchObject({
      type: 'profile.file_written',
      actor: 'operator',
      data: { file: 'memories/projects.md', replaced: false },
    });
  });

  it('enables the relay for a profile as `svc relay profiles enable` does, recorded with the operator as actor', async () => {
    const r = await call(relay, 'POST', '/console/api/profiles/work/enable', {});
    expect(r).toMatchObject({
      status: 200,
      body: { ok: true, profile: 'work', was: 'absent', changed: true, backup: expect.stringMatching(/config\.yaml\.bak$/) },
    });
    expect(readEvents(relay.home).find((e) => e.type === 'profile.relay_enabled')).toMatchObject({
      actor: 'operator',
      data: { profile: 'work', was: 'absent' },
    });
    expect(fs.readFileSync(path.join(relay.home, 'profiles', 'work', 'config.yaml'), 'utf8')).toMatch(/svc-relay/);
    const v = await call(relay, 'GET', '/console/api/profiles');
    expect(v.body.profiles.find((p: any) => p.name === 'work').relay).toBe('enabled');
    expect(v.body.enablements).toEqual([expect.objectContaining({ profile: 'work', was: 'absent', actor: 'operator' })]);
    const again = await call(relay, 'POST', '/console/api/profiles/work/enable', {});
    expect(again.body).toMatchObject({ was: 'enabled', changed: false });
    expect(await call(relay, 'POST', '/console/api/profiles/ghost/enable', {})).toMatchObject({ status: 404, body: { code: 'profile.not_found' } });
  });

  it('serves the avatar phones get; rescans on demand', async () => {
    const res = await fetch(`${relay.url}/console/api/profiles/work/avatar`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(
      Buffer.from(await res.arrayBuffer())
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
    expect((await fetch(`${relay.url}/console/api/profiles/default/avatar`)).status).toBe(404);
    expect(await call(relay, 'POST', '/console/api/profiles/rescan', {})).toMatchObject({ status: 200, body: { ok: true, profiles: 2, offered: 2 } });
  });

  it('refuses bad names, file names and bodies with a code, writing nothing', async () => {
    await relay.loop.drain();
    const before = relay.loop.lastSeq;
    const cases: Array<[string, string, unknown, number, string]> = [
      ['GET', '/console/api/profiles/..%2Fetc/soul', undefined, 400, 'profile.bad_name'],
      ['GET', '/console/api/profiles/.hidden/memory', undefined, 400, 'profile.bad_name'],
      ['GET', '/console/api/profiles/ghost/soul', undefined, 404, 'profile.not_found'],
      ['POST', '/console/api/profiles/work/memory/run.sh', { content: 'x', if_match: null }, 400, 'profile.bad_filename'],
      ['POST', '/console/api/profiles/work/memory/..%2F..%2Fconfig.md', { content: 'x', if_match: null }, 400, 'profile.bad_filename'],
      ['POST', '/console/api/profiles/work/soul', { content: 5, if_match: null }, 400, 'console.bad_body'],
      ['POST', '/console/api/profiles/work/soul', { content: 'no etag' }, 400, 'console.bad_body'],
      ['POST', '/console/api/profiles/work/soul', { content: 'x', if_match: null, force: true }, 400, 'console.bad_body'],
      ['POST', '/console/api/profiles/work/soul', ['x'], 400, 'console.bad_body'],
      ['POST', '/console/api/profiles/work/soul', { content: 'x'.repeat(1024 * 1024 + 1), if_match: '*' }, 413, 'profile.too_large'],
    ];
    for (const [method, route, body, status, code] of cases) {
      const r = await call(relay, method, route, body);
      expect([route, r.status, r.body.code]).toEqual([route, status, code]);
    }
    await relay.loop.drain();
    expect(relay.loop.lastSeq).toBe(before);
    expect(relay.logs.join('')).not.toContain('"statusCode":500');
  });

  it('answers only a local browser on this relay', async () => {
    await expectLoopbackOnly(relay, 'GET', '/console/api/profiles');
    await expectLoopbackOnly(relay, 'GET', '/console/api/profiles/work/soul');
    await expectLoopbackOnly(relay, 'POST', '/console/api/profiles/work/soul', '{"content":"pwned","if_match":"*"}');
    await expectLoopbackOnly(relay, 'POST', '/console/api/profiles/work/memory/x.md', '{"content":"pwned","if_match":null}');
    await expectLoopbackOnly(relay, 'POST', '/console/api/profiles/work/enable', '{}');
    await expectLoopbackOnly(relay, 'POST', '/console/api/profiles/rescan', '{}');
  });
});

describe('console Profiles page with RELAY_PROFILE_DISCOVERY=0', () => {
  it('says discovery is off and lists nothing', async () => {
    const relay = await startRelay({ home: profileHome(), env: { RELAY_PROFILE_DISCOVERY: '0' } });
    try {
      const v = await call(relay, 'GET', '/console/api/profiles');
      expect(v.body).toMatchObject({ discovery: false, profiles: [], offered: 0, changed_at: null });
    } finally {
      await relay.close();
    }
  });
});
