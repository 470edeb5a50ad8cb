import { ReadModels } from '@svc/domain';
import { eventsDir, replayLog } from '@svc/events';
import { bearer, pairPhone, startRelay, tempHome, type TestRelay } from '../support/harness';
import { call, REMOTE } from '../support/http';
import * as fs from 'node:fs';
import * as path from 'node:path';

async function synth(relay: TestRelay, text: string, token: string, profile?: string) {
  const res = await fetch(`${relay.url}/voice/synthesize`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...bearer(token) },
    body: JSON.stringify({ text, ...(profile ? { profile } : {}) }),
  });
  await res.arrayBuffer();
  return res.status;
}

describe('provider usage (spec 4.8): GET /usage/providers', () => {
  let relay: TestRelay;
  let token: string;
  beforeAll(async () => {
    const home = tempHome();
    fs.mkdirSync(path.join(home, 'profiles', 'work'), { recursive: true });
    fs.writeFileSync(path.join(home, 'profiles', 'work', 'config.yaml'), 'tts:\n  provider: espeak\n');
    fs.writeFileSync(path.join(home, 'config.yaml'), 'tts:\n  provider: offline\n');
    relay = await startRelay({
      home,
      env: {
        RELAY_PROVIDER_USAGE_ENABLED: '1',
        RELAY_REALTIME_VOICE_ENABLED: '1',
        RELAY_WEBAPI_URL: 'http://127.0.0.1:1',
        OPENAI_API_KEY: 'sk-usage-test-key-000000000000',
      },
    });
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
  });
  afterAll(() => relay.close());

  it('counts what the relay asked of each provider, per profile, and never shows a credential', async () => {
    expect(await synth(relay, 'hello there', token)).toBe(200);
    expect(await synth(relay, 'work hello', token, 'work')).toBe(200);
    const r = await call(relay, 'GET', '/usage/providers', undefined, { ...REMOTE, ...bearer(token) });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ ok: true, scope: { profile: null, session_id: null }, source: 'relay_event_log', since: expect.any(String) });
    const offline = r.body.providers.find((p: { provider: string }) => p.provider === 'offline');
    expect(offline).toMatchObject({ available: true, totals: { syntheses: 2, characters: 'hello there'.length + 'work hello'.length, failures: 0 } });
    expect(offline.totals.audio_bytes).toBeGreaterThan(1000);
    expect(offline.by_profile.map((x: { profile: string }) => x.profile).sort()).toEqual(['default', 'work']);
    expect(r.body.providers.find((p: { provider: string }) => p.provider === 'openai')).toMatchObject({ available: true, totals: { syntheses: 0 } });
    expect(JSON.stringify(r.body)).not.toContain('sk-usage-test-key');
    const work = await call(relay, 'GET', '/usage/providers?profile=work', undefined, { ...REMOTE, ...bearer(token) });
    expect(work.body.providers.find((p: { provider: string }) => p.provider === 'offline').totals.syntheses).toBe(1);
  });

  it('session_id scopes to the realtime agent sessions bound to that chat session', async () => {
    const created = await call(relay, 'POST', '/voice/realtime-agent/session', { chat_session_id: 'chat-7' }, { ...REMOTE, ...bearer(token) });
    expect(created.status).toBe(200);
    relay.clock.advance(61_000);
    await relay.sweep();
    const r = await call(relay, 'GET', '/usage/providers?session_id=chat-7', undefined, bearer(token));
    const rows = r.body.providers.filter((p: { totals: { sessions: number } }) => p.totals.sessions > 0);
    expect(rows).toHaveLength(1);
    expect(rows[0].totals).toMatchObject({ sessions: 1, syntheses: 0 });
    const other = await call(relay, 'GET', '/usage/providers?session_id=chat-8', undefined, bearer(token));
    expect(other.body.providers.every((p: { totals: { sessions: number } }) => p.totals.sessions === 0)).toBe(true);
  });

  it('bad scopes are 400, no bearer from another host 401; the account replays from the log', async () => {
    for (const q of ['profile=../x', 'session_id=' + 'x'.repeat(200), 'session_id=a%20b']) {
      const r = await call(relay, 'GET', `/usage/providers?${q}`, undefined, bearer(token));
      expect([q, r.status, r.body.ok]).toEqual([q, 400, false]);
    }
    expect((await call(relay, 'GET', '/usage/providers', undefined, REMOTE)).status).toBe(401);
    await relay.loop.drain();
    const replayed = new ReadModels();
    replayLog(eventsDir(relay.home), replayed);
    expect(replayed.usage.snapshot()).toEqual(relay.loop.models.usage.snapshot());
  });
});

describe('provider usage off (the default)', () => {
  it('answers 404 naming RELAY_PROVIDER_USAGE_ENABLED', async () => {
    const relay = await startRelay();
    try {
      const r = await call(relay, 'GET', '/usage/providers');
      expect(r).toMatchObject({
        status: 404,
        body: { ok: false, code: 'usage.disabled', error: expect.stringContaining('RELAY_PROVIDER_USAGE_ENABLED=1') },
      });
    } finally {
      await relay.close();
    }
  });
});
