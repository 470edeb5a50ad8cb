import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import WebSocket from 'ws';
import { bearer, pairPhone, readEvents, startRelay, tempHome, type TestRelay } from '../support/harness';
import { call, REMOTE } from '../support/http';

jest.setTimeout(60_000);

const API_KEY = 'api-key-for-voice-tests-0123456789';

/** A spoken phrase as WAV, made by the same espeak-ng the offline provider uses (installed by .ci/run). */
function spokenWav(text: string): Buffer {
  return execFileSync('espeak-ng', ['-v', 'en-us', '--stdout', text]);
}

function multipart(file: Buffer, type: string, name = 'audio.wav', field = 'file'): { body: Buffer; headers: Record<string, string> } {
  const boundary = '----svcvoice' + Math.random().toString(16).slice(2);
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${name}"\r\nContent-Type: ${type}\r\n\r\n`;
  return {
    body: Buffer.concat([Buffer.from(head), file, Buffer.from(`\r\n--${boundary}--\r\n`)]),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
}

async function synth(relay: TestRelay, body: unknown, headers: Record<string, string>) {
  const res = await fetch(`${relay.url}/voice/synthesize`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
}

async function transcribe(relay: TestRelay, file: Buffer, type: string, headers: Record<string, string>, query = '') {
  const m = multipart(file, type);
  const res = await fetch(`${relay.url}/voice/transcribe${query}`, { method: 'POST', headers: { ...m.headers, ...headers }, body: m.body });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

const isMp3 = (b: Buffer) => b.toString('latin1', 0, 3) === 'ID3' || (b[0] === 0xff && (b[1] & 0xe0) === 0xe0);

describe('relay voice, offline provider (espeak-ng, lame, pocketsphinx)', () => {
  let relay: TestRelay;
  let token: string;
  beforeAll(async () => {
    relay = await startRelay({ env: { API_SERVER_KEY: API_KEY, VOICE_TOOLS_OPENAI_KEY: '', OPENAI_API_KEY: '' } });
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
  });
  afterAll(() => relay.close());

  it('GET /voice/config reports the offline provider as the default when no cloud key is set, with the global scope', async () => {
    const r = await call(relay, 'GET', '/voice/config', undefined, bearer(token));
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      success: true,
      profile: null,
      config_scope: 'global',
      fallback_to_global: false,
      tts: { provider: 'offline', enabled: true },
      stt: { provider: 'offline', enabled: true },
      requirements: { tts_available: true, stt_available: true, max_text_chars: 5000 },
    });
  });

  it('POST /voice/synthesize answers an MP3 and records the call without its text', async () => {
    const r = await synth(relay, { text: 'Hello from the **relay**. See https://example.com' }, bearer(token));
    expect(r.status).toBe(200);
    expect(r.type).toBe('audio/mpeg');
    expect(isMp3(r.bytes)).toBe(true);
    expect(r.bytes.length).toBeGreaterThan(2000);
    const e = readEvents(relay.home)
      .filter((x) => x.type === 'voice.synthesized')
      .at(-1)!;
    expect(e.data).toMatchObject({
      provider: 'offline',
      via: 'session',
      outcome: 'ok',
      chars: 'Hello from the relay . See'.length,
      bytes: r.bytes.length,
    });
    expect(JSON.stringify(e)).not.toContain('Hello');
  });

  it('refuses bad synthesize bodies with 400 and writes no event: 5,001 characters, empty, not a string, not an object', async () => {
    const before = readEvents(relay.home).length;
    for (const body of [{ text: 'a'.repeat(5001) }, { text: '   ' }, { text: 5 }, ['x'], { text: 'ok', profile: '../etc' }]) {
      const r = await synth(relay, body, bearer(token));
      expect(r.status).toBe(400);
      const j = JSON.parse(r.bytes.toString());
      expect(j).toMatchObject({ ok: false, success: false });
      expect(typeof j.error).toBe('string');
    }
    expect((JSON.parse((await synth(relay, { text: 'a'.repeat(5001) }, bearer(token))).bytes.toString()) as { error: string }).error).toContain(
      '5000',
    );
    expect(readEvents(relay.home).length).toBe(before);
    // Exactly 5,000 is accepted.
    expect((await synth(relay, { text: 'a '.repeat(2500).trim() }, bearer(token))).status).toBe(200);
  });

  it('POST /voice/transcribe turns spoken WAV into text with pocketsphinx (any sample rate), recorded without the text', async () => {
    const wav = spokenWav('hello world');
    const r = await transcribe(relay, wav, 'audio/wav', bearer(token));
    expect(r.body).toMatchObject({ success: true });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, provider: 'offline', profile: null });
    expect(typeof r.body.text).toBe('string');
    expect(r.body.text).toMatch(/hello|world/);
    const e = readEvents(relay.home)
      .filter((x) => x.type === 'voice.transcribed')
      .at(-1)!;
    expect(e.data).toMatchObject({ provider: 'offline', outcome: 'ok', bytes: wav.length, chars: r.body.text.length });
    expect(e.data.audioMs as number).toBeGreaterThan(300);
    expect(JSON.stringify(e)).not.toContain(r.body.text);
  });

  it("reads what the real clients record: the app's .m4a (AAC) and the desktop CLI's audio/webm (Opus), through ffmpeg", async () => {
    const dir = fs.mkdtempSync(path.join(tempHome(), 'rec-'));
    fs.writeFileSync(path.join(dir, 'in.wav'), spokenWav('hello world'));
    for (const [file, type, codec] of [
      ['voice.m4a', 'audio/mp4', 'aac'],
      ['voice.webm', 'audio/webm', 'libopus'],
    ]) {
      execFileSync('ffmpeg', ['-nostdin', '-loglevel', 'error', '-i', path.join(dir, 'in.wav'), '-c:a', codec, path.join(dir, file)]);
      const m = multipart(fs.readFileSync(path.join(dir, file)), type, file, 'audio');
      const res = await fetch(`${relay.url}/voice/transcribe`, { method: 'POST', headers: { ...m.headers, ...bearer(token) }, body: m.body });
      const body = (await res.json()) as Record<string, any>;
      expect(body).toMatchObject({ success: true, provider: 'offline' });
      expect(body.text).toMatch(/hello|world/);
    }
  });

  it('also reads MP3 uploads (decoded by lame)', async () => {
    const mp3 = (await synth(relay, { text: 'hello world' }, bearer(token))).bytes;
    const r = await transcribe(relay, mp3, 'audio/mpeg', bearer(token));
    expect(r.body).toMatchObject({ success: true });
    expect(r.status).toBe(200);
    expect(typeof r.body.text).toBe('string');
  });

  it('refuses bad uploads with the right status and says why: not audio 415, a format the offline provider cannot read 415, empty 400, no file 400, not multipart 415', async () => {
    expect((await transcribe(relay, Buffer.from('hello'), 'text/plain', bearer(token))).status).toBe(415);
    const m4a = await transcribe(relay, Buffer.from('\x00\x00\x00\x20ftypM4A but not really audio'), 'audio/mp4', bearer(token));
    expect(m4a.status).toBe(415);
    expect(m4a.body.error).toContain('ffmpeg could not decode');
    expect((await transcribe(relay, Buffer.alloc(0), 'audio/wav', bearer(token))).status).toBe(400);
    const noFile = await fetch(`${relay.url}/voice/transcribe`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=x', ...bearer(token) },
      body: '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\nb\r\n--x--\r\n',
    });
    expect(noFile.status).toBe(400);
    const json = await call(relay, 'POST', '/voice/transcribe', { audio: 'x' }, bearer(token));
    expect(json.status).toBe(415);
    expect(json.body.success).toBe(false);
  });

  it('caps the upload and says the cap (413)', async () => {
    const small = await startRelay({ env: { RELAY_VOICE_MAX_AUDIO_BYTES: '4096' } });
    try {
      const p = await pairPhone(small);
      p.phone.close();
      const r = await transcribe(small, Buffer.alloc(10_000, 1), 'audio/wav', bearer(p.token));
      expect(r.status).toBe(413);
      expect(r.body).toMatchObject({ ok: false, success: false, code: 'voice.audio_too_large', max_bytes: 4096 });
      expect(r.body.error).toContain('4096');
    } finally {
      await small.close();
    }
  });

  it('needs the grant each route names', async () => {
    const p = await pairPhone(relay, {
      terms: { grants: { 'voice:tts': false, 'voice:stt': false, 'voice:config': false, 'voice:realtime': false } },
    });
    p.phone.close();
    expect((await call(relay, 'GET', '/voice/config', undefined, bearer(p.token))).status).toBe(403);
    expect((await synth(relay, { text: 'x' }, bearer(p.token))).status).toBe(403);
    expect((await transcribe(relay, spokenWav('x'), 'audio/wav', bearer(p.token))).status).toBe(403);
    expect((await call(relay, 'GET', '/voice/output/config', undefined, bearer(p.token))).status).toBe(403);
    expect((await call(relay, 'GET', '/voice/realtime/config', undefined, bearer(p.token))).status).toBe(403);
    expect((await call(relay, 'GET', '/voice/config')).status).toBe(401);
  });
});

describe('API voice: the API bearer on the voice routes only (spec 5)', () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await startRelay({ env: { API_SERVER_KEY: API_KEY } });
  });
  afterAll(() => relay.close());

  it('is accepted on /voice/* from loopback and recorded as api', async () => {
    expect((await call(relay, 'GET', '/voice/config', undefined, bearer(API_KEY))).status).toBe(200);
    expect((await synth(relay, { text: 'api voice' }, bearer(API_KEY))).status).toBe(200);
    const e = readEvents(relay.home)
      .filter((x) => x.type === 'voice.synthesized')
      .at(-1)!;
    expect(e).toMatchObject({ actor: 'api', data: { via: 'api' } });
  });

  it('never opens another route, and a wrong key is an unknown token', async () => {
    for (const route of ['/sessions', '/media/inspect', '/bridge/status', '/clipboard/inbox/latest']) {
      const r = await fetch(`${relay.url}${route}`, { headers: { ...bearer(API_KEY), ...REMOTE } });
      expect([401, 403]).toContain(r.status);
    }
    expect((await call(relay, 'GET', '/voice/config', undefined, bearer(API_KEY + 'x'))).status).toBe(401);
  });

  it('from a non-loopback peer needs HTTPS, until the operator turns the escape hatch on (an event; reset at restart)', async () => {
    const remote = { ...bearer(API_KEY), ...REMOTE };
    const refused = await call(relay, 'GET', '/voice/config', undefined, remote);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('auth.api_key_needs_https');
    // X-Forwarded-Proto is not trusted unless RELAY_TRUST_PROXY_HEADERS=1.
    expect((await call(relay, 'GET', '/voice/config', undefined, { ...remote, 'x-forwarded-proto': 'https' })).status).toBe(403);

    expect((await call(relay, 'GET', '/relay/security')).body).toMatchObject({ allow_insecure_api_bearer: false, api_key_configured: true });
    expect((await call(relay, 'PATCH', '/relay/security', { allow_insecure_api_bearer: 'yes' })).status).toBe(400);
    expect((await call(relay, 'PATCH', '/relay/security', { allow_insecure_api_bearer: true, trust_proxy_headers: true })).body).toMatchObject({
      ok: false,
      code: 'validation_failed',
      error: 'send {"allow_insecure_api_bearer": true|false}',
    });
    expect((await call(relay, 'PATCH', '/relay/security', { allow_insecure_api_bearer: true }, REMOTE)).status).toBe(403);
    const on = await call(relay, 'PATCH', '/relay/security', { allow_insecure_api_bearer: true });
    expect(on).toMatchObject({ status: 200, body: { allow_insecure_api_bearer: true } });
    expect((await call(relay, 'GET', '/voice/config', undefined, remote)).status).toBe(200);
    const changes = readEvents(relay.home).filter((x) => x.type === 'relay.security_changed');
    expect(changes.at(-1)).toMatchObject({ actor: 'operator', data: { allowInsecureApiBearer: true, previous: false } });
    // The same value again writes nothing.
    await call(relay, 'PATCH', '/relay/security', { allow_insecure_api_bearer: true });
    expect(readEvents(relay.home).filter((x) => x.type === 'relay.security_changed')).toHaveLength(changes.length);

    relay = await relay.restart();
    expect((await call(relay, 'GET', '/relay/security')).body.allow_insecure_api_bearer).toBe(false);
    expect((await call(relay, 'GET', '/voice/config', undefined, remote)).status).toBe(403);
    // The key never reaches the log.
    expect(
      fs
        .readdirSync(path.join(relay.home, 'relay', 'events'))
        .map((f) => fs.readFileSync(path.join(relay.home, 'relay', 'events', f), 'utf8'))
        .join(''),
    ).not.toContain(API_KEY);
    expect(relay.logs.join('')).not.toContain(API_KEY);
  });

  it('trusts X-Forwarded-Proto: https with RELAY_TRUST_PROXY_HEADERS=1, and the escape hatch when started with it', async () => {
    const proxied = await startRelay({ env: { API_SERVER_KEY: API_KEY, RELAY_TRUST_PROXY_HEADERS: '1' } });
    try {
      expect((await call(proxied, 'GET', '/voice/config', undefined, { ...bearer(API_KEY), ...REMOTE, 'x-forwarded-proto': 'https' })).status).toBe(
        200,
      );
      expect((await call(proxied, 'GET', '/voice/config', undefined, { ...bearer(API_KEY), ...REMOTE, 'x-forwarded-proto': 'http' })).status).toBe(
        403,
      );
    } finally {
      await proxied.close();
    }
    const open = await startRelay({ env: { API_SERVER_KEY: API_KEY, RELAY_ALLOW_INSECURE_API_BEARER: '1' } });
    try {
      expect((await call(open, 'GET', '/voice/config', undefined, { ...bearer(API_KEY), ...REMOTE })).status).toBe(200);
      expect(readEvents(open.home).find((x) => x.type === 'relay.started')!.data.allowInsecureApiBearer).toBe(true);
    } finally {
      await open.close();
    }
  });
});

describe('voice config: profiles, the global config, settings PATCH', () => {
  let relay: TestRelay;
  let token: string;
  let home: string;
  beforeAll(async () => {
    home = tempHome();
    fs.writeFileSync(
      path.join(home, 'config.yaml'),
      'model: gpt\ntts:\n  provider: openai\n  openai:\n    voice: nova\n    model: tts-1\nstt:\n  provider: local\n',
    );
    fs.mkdirSync(path.join(home, 'profiles', 'work'), { recursive: true });
    fs.writeFileSync(
      path.join(home, 'profiles', 'work', 'config.yaml'),
      '# work profile\nagent: {name: w}\ntts:\n  provider: espeak-ng\n  voice: en-gb\n',
    );
    relay = await startRelay({ home, env: { VOICE_TOOLS_OPENAI_KEY: '', OPENAI_API_KEY: '' } });
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
  });
  afterAll(() => relay.close());

  it('resolves ?profile=: the profile own config, or the global one with fallback_to_global', async () => {
    const g = await call(relay, 'GET', '/voice/config', undefined, bearer(token));
    expect(g.body).toMatchObject({
      config_scope: 'global',
      tts: { provider: 'openai', voice: 'nova', model: 'tts-1', enabled: false },
      stt: { provider: 'offline' },
    });
    expect(g.body.requirements.tts_reason).toContain('no API key');
    const w = await call(relay, 'GET', '/voice/config?profile=work', undefined, bearer(token));
    expect(w.body).toMatchObject({
      profile: 'work',
      config_scope: 'profile',
      fallback_to_global: false,
      tts: { provider: 'offline', voice: 'en-gb', enabled: true },
    });
    const missing = await call(relay, 'GET', '/voice/config?profile=nobody', undefined, bearer(token));
    expect(missing.body).toMatchObject({ profile: 'nobody', config_scope: 'global', fallback_to_global: true });
    for (const bad of ['..', '.hidden', 'a/b', 'x'.repeat(65)])
      expect((await call(relay, 'GET', `/voice/config?profile=${encodeURIComponent(bad)}`, undefined, bearer(token))).status).toBe(400);
    expect(JSON.stringify(w.body)).not.toContain(home);
  });

  it('a provider without its key is spec 7 500 "no API key", recorded as failed; the profile offline provider works', async () => {
    const r = await synth(relay, { text: 'needs a key' }, bearer(token));
    expect(r.status).toBe(500);
    const j = JSON.parse(r.bytes.toString());
    expect(j).toMatchObject({ ok: false, success: false, code: 'voice.no_api_key' });
    expect(j.error).toContain('no API key');
    expect(
      readEvents(relay.home)
        .filter((x) => x.type === 'voice.synthesized')
        .at(-1)!.data,
    ).toMatchObject({ provider: 'openai', outcome: 'failed', error: 'voice.no_api_key' });
    expect((await synth(relay, { text: 'works offline', profile: 'work' }, bearer(token))).status).toBe(200);
  });

  it('PATCH /voice/output/config without a profile changes relay-owned defaults (an event; they outlive a restart)', async () => {
    const before = await call(relay, 'GET', '/voice/output/config', undefined, bearer(token));
    expect(before.body).toMatchObject({ config_scope: 'relay', provider: 'offline', voice: 'en-us', sample_rate: 22050 });
    expect(before.body.voices.length).toBeGreaterThan(0);
    const r = await call(relay, 'PATCH', '/voice/output/config', { voice: 'en-gb', sample_rate: 22050, language: 'en' }, bearer(token));
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ voice: 'en-gb', config_scope: 'relay' });
    const e = readEvents(relay.home)
      .filter((x) => x.type === 'voice.settings_changed')
      .at(-1)!;
    expect(e.data).toEqual({ section: 'voice_output', scope: 'relay', profile: null, changed: { voice: 'en-gb' } });
    relay = await relay.restart();
    expect((await call(relay, 'GET', '/voice/output/config', undefined, bearer(token))).body.voice).toBe('en-gb');
  });

  it('PATCH with a profile rewrites that profile file atomically, keeping everything else, and records its digest', async () => {
    const file = path.join(home, 'profiles', 'work', 'config.yaml');
    const r = await call(relay, 'PATCH', '/voice/output/config', { profile: 'work', voice: 'en-us+f3', sample_rate: 22050 }, bearer(token));
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ profile: 'work', config_scope: 'profile', voice: 'en-us+f3' });
    const text = fs.readFileSync(file, 'utf8');
    expect(text).toContain('voice_output:');
    expect(text).toContain('en-us+f3');
    expect(text).toContain('agent:');
    expect(text).toContain('provider: espeak-ng');
    expect(fs.readdirSync(path.dirname(file)).sort()).toEqual(['config.yaml', 'config.yaml.bak']); // no temp file left
    const e = readEvents(relay.home)
      .filter((x) => x.type === 'voice.settings_changed')
      .at(-1)!;
    expect(e.data).toMatchObject({ scope: 'profile', profile: 'work', changed: { voice: 'en-us+f3', sample_rate: 22050 } });
    expect((e.data.file as { sha256: string }).sha256).toBe(createHash('sha256').update(text).digest('hex'));
  });

  it('refuses unknown settings, bad values and unknown providers with 400 and writes nothing', async () => {
    const before = readEvents(relay.home).length;
    const file = path.join(home, 'profiles', 'work', 'config.yaml');
    const text = fs.readFileSync(file, 'utf8');
    for (const body of [
      { api_key: 'x' },
      { sample_rate: -1 },
      { voice: '' },
      { enabled: 'yes' },
      {},
      { provider: 'elevenlabs' },
      { profile: 'work', nope: 1 },
      // A known setting beside an unknown one: still refused by name (the DTO alone would drop the unknown key).
      { voice: 'en-gb', api_key: 'x' },
    ])
      expect((await call(relay, 'PATCH', '/voice/output/config', body, bearer(token))).status).toBe(400);
    const named = await call(relay, 'PATCH', '/voice/output/config', { voice: 'en-gb', api_key: 'x' }, bearer(token));
    expect(named.body.error).toMatch(/^unknown voice_output setting "api_key"; known: enabled, provider/);
    expect((await call(relay, 'PATCH', '/voice/output/config', { sample_rate: -1 }, bearer(token))).body).toMatchObject({
      code: 'validation_failed',
      error: 'sample_rate must be a whole number from 0 to 192000',
    });
    expect(readEvents(relay.home).length).toBe(before);
    expect(fs.readFileSync(file, 'utf8')).toBe(text);
  });

  it('provider options and validation; an unknown provider is 404', async () => {
    const o = await call(relay, 'GET', '/voice/output/providers/offline/options?profile=work', undefined, bearer(token));
    // `provider` is the provider object the app decodes (RealtimeProviderInfo), `provider_id` its id.
    expect(o.body).toMatchObject({ provider_id: 'offline', provider: { id: 'offline' }, source: 'static', profile: 'work', config_scope: 'profile' });
    expect((await call(relay, 'GET', '/voice/output/providers/nope/options', undefined, bearer(token))).status).toBe(404);
    const ok = await call(
      relay,
      'POST',
      '/voice/output/providers/offline/validate',
      { model: 'espeak-ng', voice: 'en-gb', sample_rate: 22050, language: 'en' },
      bearer(token),
    );
    expect(ok.body).toMatchObject({ valid: true });
    const bad = await call(
      relay,
      'POST',
      '/voice/output/providers/offline/validate',
      { model: 'x', voice: 'en-us', sample_rate: 8000 },
      bearer(token),
    );
    expect(bad.status).toBe(200);
    expect(bad.body.valid).toBe(false);
    expect(bad.body.checks.filter((c: { ok: boolean }) => !c.ok).map((c: { name: string }) => c.name)).toEqual(['model', 'sample_rate']);
    expect(bad.body.checks.filter((c: { status: string }) => c.status === 'error').map((c: { id: string }) => c.id)).toEqual([
      'model_known',
      'sample_rate_known',
    ]);
    expect(bad.body.summary).toContain('sample_rate');
    const openai = await call(relay, 'POST', '/voice/output/providers/openai/validate', { voice: 'alloy' }, bearer(token));
    expect(openai.body).toMatchObject({ valid: false });
    expect(openai.body.checks[0].message).toContain('no API key');
  });
});

describe('the OpenAI-compatible provider (against a real HTTP server standing in for the API)', () => {
  let relay: TestRelay;
  let token: string;
  let server: http.Server;
  const seen: Array<{ url: string; auth: string | undefined; type: string | undefined; body: Buffer }> = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ url: req.url!, auth: req.headers.authorization, type: req.headers['content-type'], body: Buffer.concat(chunks) });
        if (req.url === '/v1/audio/speech') {
          res.setHeader('content-type', 'audio/mpeg');
          return res.end(Buffer.from('ID3fake-mp3-bytes'));
        }
        if (req.url === '/v1/audio/transcriptions') {
          res.setHeader('content-type', 'application/json');
          return res.end(JSON.stringify({ text: 'transcribed by the fake' }));
        }
        if (req.url === '/v1/models') {
          res.setHeader('content-type', 'application/json');
          return res.end(JSON.stringify({ data: [{ id: 'gpt-4o-mini-tts' }, { id: 'whisper-1' }, { id: 'gpt-4o' }] }));
        }
        res.statusCode = 401;
        res.end(JSON.stringify({ error: { message: 'bad key' } }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    relay = await startRelay({ env: { OPENAI_API_KEY: 'sk-test-provider-key', OPENAI_BASE_URL: base } });
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
  });
  afterAll(async () => {
    await relay.close();
    await new Promise((r) => server.close(r));
  });

  it('is the default with a key: synthesize posts JSON with the key, transcribe posts multipart; options are discovered', async () => {
    const s = await synth(relay, { text: 'hi there' }, bearer(token));
    expect(s.status).toBe(200);
    expect(s.bytes.toString()).toBe('ID3fake-mp3-bytes');
    const speech = seen.find((x) => x.url === '/v1/audio/speech')!;
    expect(speech.auth).toBe('Bearer sk-test-provider-key');
    expect(JSON.parse(speech.body.toString())).toMatchObject({ input: 'hi there', response_format: 'mp3', model: 'gpt-4o-mini-tts', voice: 'alloy' });

    const t = await transcribe(relay, spokenWav('x'), 'audio/wav', bearer(token));
    expect(t.body).toMatchObject({ success: true, text: 'transcribed by the fake', provider: 'openai' });
    const upload = seen.find((x) => x.url === '/v1/audio/transcriptions')!;
    expect(upload.type).toMatch(/^multipart\/form-data; boundary=/);
    const boundary = upload.type!.split('boundary=')[1];
    const text = upload.body.toString('latin1');
    expect(
      text.startsWith(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="audio.wav"\r\nContent-Type: audio/wav\r\n\r\nRIFF`),
    ).toBe(true);
    expect(text).toContain(`--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n--${boundary}--\r\n`);
    expect(upload.body.length).toBeGreaterThan(spokenWav('x').length);

    const o = await call(relay, 'GET', '/voice/output/providers/openai/options', undefined, bearer(token));
    expect(o.body).toMatchObject({ source: 'discovered', models: ['gpt-4o-mini-tts', 'whisper-1'] });
    expect(JSON.stringify(o.body)).not.toContain('sk-test');
    expect(
      readEvents(relay.home)
        .map((e) => JSON.stringify(e))
        .join(''),
    ).not.toContain('sk-test');
  });
});

describe('the streaming output session: POST /voice/output/session, then its socket', () => {
  let relay: TestRelay;
  let token: string;
  beforeAll(async () => {
    relay = await startRelay({ env: { VOICE_TOOLS_OPENAI_KEY: '', OPENAI_API_KEY: '', API_SERVER_KEY: API_KEY } });
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
  });
  afterAll(() => relay.close());

  const open = (id: string, headers: Record<string, string>) => new WebSocket(`${relay.url.replace('http', 'ws')}/voice/output/${id}`, { headers });
  const frames = (ws: WebSocket) => {
    const got: Array<Record<string, any>> = [];
    ws.on('message', (d) => got.push(JSON.parse(String(d))));
    return got;
  };
  const until = async (pred: () => boolean, ms = 10_000) => {
    const end = Date.now() + ms;
    while (!pred()) {
      if (Date.now() > end) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  const rejected = (ws: WebSocket) =>
    new Promise<number>((resolve) => {
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => resolve(101));
      ws.on('error', () => undefined);
    });

  it('streams speech as ~100 ms PCM frames as espeak-ng produces it, then done; one response; the session ends as an event', async () => {
    const created = await call(relay, 'POST', '/voice/output/session', {}, bearer(token));
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      success: true,
      provider: 'offline',
      sample_rate: 22050,
      codec: 'pcm',
      protocol: 'svc.voice.output.v0',
      resume_supported: true,
    });
    const id = created.body.session_id as string;
    expect(created.body.websocket_path).toBe(`/voice/output/${id}`);
    const ws = open(id, bearer(token));
    const got = frames(ws);
    await until(() => got.some((f) => f.type === 'voice.session.ready'));
    expect(got[0]).toMatchObject({ type: 'voice.session.ready', session_id: id, provider: 'offline', sample_rate: 22050, event_id: 1 });
    ws.send(JSON.stringify({ type: 'response.create', text: 'Streaming speech from the relay, frame by frame, as it is made.' }));
    await until(() => got.some((f) => f.type === 'voice.response.done' || f.type === 'voice.error'));
    const types = got.map((f) => f.type);
    expect(types[1]).toBe('voice.response.started');
    const deltas = got.filter((f) => f.type === 'voice.audio.delta');
    expect(deltas.length).toBeGreaterThan(10);
    for (const d of deltas.slice(0, -1)) {
      expect(d.byte_count).toBe(4410);
      expect(Buffer.from(d.audio_base64, 'base64').length).toBe(4410);
    }
    expect(deltas.map((d) => d.audio_event_id)).toEqual(deltas.map((_, i) => i + 1));
    expect(deltas.some((d) => d.peak_level > 0.05)).toBe(true);
    expect(types.slice(-2)).toEqual(['voice.audio.done', 'voice.response.done']);
    const done = got.at(-1)!;
    const bytes = deltas.reduce((n, d) => n + d.byte_count, 0);
    expect(done.metrics).toMatchObject({ chunks: deltas.length, bytes });
    expect(typeof done.metrics.response_done_ms).toBe('number');
    expect(Object.values(done.metrics)).not.toContain(null);
    expect(got.map((f) => f.event_id)).toEqual(got.map((_, i) => i + 1));

    ws.send(JSON.stringify({ type: 'response.create', text: 'again' }));
    ws.send('not json');
    ws.send(Buffer.from([1, 2, 3]));
    ws.send(JSON.stringify({ type: 'nope' }));
    await until(() => got.filter((f) => f.type === 'voice.error').length === 4);
    expect(got.filter((f) => f.type === 'voice.error').map((f) => f.message)).toEqual([
      'response already completed',
      'invalid JSON message',
      'unsupported websocket frame: send JSON text',
      'unsupported message type: nope',
    ]);
    ws.send(JSON.stringify({ type: 'session.close' }));
    await new Promise((r) => ws.once('close', r));
    await until(() => readEvents(relay.home).some((e) => e.type === 'voice.session_ended' && e.data.sessionId === id));
    const ended = readEvents(relay.home).find((e) => e.type === 'voice.session_ended' && e.data.sessionId === id)!;
    expect(ended.data).toMatchObject({ kind: 'output', reason: 'closed', chunks: deltas.length, bytes });
    expect(
      readEvents(relay.home)
        .map((e) => JSON.stringify(e))
        .join(''),
    ).not.toContain('frame by frame');
    // Once ended, the path is gone for anyone else (404); its own caller's late socket is told why.
    expect(await rejected(open(id, bearer(API_KEY)))).toBe(404);
    const late = open(id, bearer(token));
    const lateFrames = frames(late);
    const lateClosed = new Promise<number>((r) => late.on('close', (code) => r(code)));
    expect(await lateClosed).toBe(4008);
    expect(lateFrames).toEqual([expect.objectContaining({ type: 'voice.session.resume_failed', reason: 'session_closed' })]);
  });

  it('refuses the socket before the 101: no or a wrong credential 401, another caller 403, unknown 404, realtime paths 404; a second socket must resume', async () => {
    const id = (await call(relay, 'POST', '/voice/output/session', {}, bearer(token))).body.session_id as string;
    expect(await rejected(open(id, {}))).toBe(401);
    expect(await rejected(open(id, bearer('x'.repeat(43))))).toBe(401);
    const other = await pairPhone(relay);
    other.phone.close();
    expect(await rejected(open(id, bearer(other.token)))).toBe(403);
    expect(await rejected(open(id, bearer(API_KEY)))).toBe(403);
    expect(await rejected(open('nosuchsession', bearer(token)))).toBe(404);
    const first = open(id, bearer(token));
    expect(await rejected(first)).toBe(101);
    // A second socket of the same caller is let in only to resume: a first frame that is not session.resume
    // gets voice.session.resume_failed (session_not_claimed) and a 4009 close, and the first socket stays.
    const second = open(id, bearer(token));
    const secondFrames = frames(second);
    const secondClosed = new Promise<number>((r) => second.on('close', (code) => r(code)));
    expect(await rejected(second)).toBe(101);
    second.send(JSON.stringify({ type: 'session.start' }));
    expect(await secondClosed).toBe(4009);
    expect(secondFrames).toEqual([expect.objectContaining({ type: 'voice.session.resume_failed', session_id: id, reason: 'session_not_claimed' })]);
    expect(first.readyState).toBe(WebSocket.OPEN);
    first.close();
    const rt = new WebSocket(`${relay.url.replace('http', 'ws')}/voice/realtime/${id}`, { headers: bearer(token) });
    expect(await rejected(rt)).toBe(404);
    // The phone socket still works beside them.
    const p = await pairPhone(relay);
    p.phone.close();
  });

  it('a session never opened expires after 60 s (the sweep records it) and its path is then unknown (404)', async () => {
    const id = (await call(relay, 'POST', '/voice/output/session', {}, bearer(API_KEY))).body.session_id as string;
    relay.clock.advance(61_000);
    await relay.sweep();
    const ended = readEvents(relay.home).find((e) => e.type === 'voice.session_ended' && e.data.sessionId === id);
    expect(ended).toMatchObject({ data: { reason: 'expired', chunks: 0 } });
    expect(await rejected(open(id, bearer(API_KEY)))).toBe(404);
  });

  it('a text over 5,000 characters is a voice.error on the socket, and the response can still be asked', async () => {
    const id = (await call(relay, 'POST', '/voice/output/session', { voice: 'en-gb' }, bearer(token))).body.session_id as string;
    const ws = open(id, bearer(token));
    const got = frames(ws);
    await until(() => got.length > 0);
    ws.send(JSON.stringify({ type: 'response.create', text: 'x'.repeat(5001) }));
    await until(() => got.some((f) => f.type === 'voice.error'));
    expect(got.find((f) => f.type === 'voice.error')).toMatchObject({ code: 'voice.text_too_long' });
    ws.send(JSON.stringify({ type: 'response.create', text: 'short' }));
    await until(() => got.some((f) => f.type === 'voice.response.done'));
    ws.close();
  });
});

describe('the experimental realtime session (/voice/realtime/session and its socket)', () => {
  const rejectedOrOpen = (ws: WebSocket) =>
    new Promise<number>((resolve) => {
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => resolve(101));
      ws.on('error', () => undefined);
    });
  const until = async (pred: () => boolean, ms = 10_000) => {
    const end = Date.now() + ms;
    while (!pred()) {
      if (Date.now() > end) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 10));
    }
  };

  it('is off until enabled (404 naming how), then acknowledges input audio and answers responses, several in turn', async () => {
    const relay = await startRelay({ env: { VOICE_TOOLS_OPENAI_KEY: '', OPENAI_API_KEY: '' } });
    try {
      const p = await pairPhone(relay);
      p.phone.close();
      const off = await call(relay, 'POST', '/voice/realtime/session', {}, bearer(p.token));
      expect(off.status).toBe(404);
      expect(off.body.error).toContain('PATCH /voice/realtime/config');
      // Relay-wide, it is the operator's switch (loopback, no bearer); a phone's PATCH is refused.
      expect((await call(relay, 'PATCH', '/voice/realtime/config', { enabled: true }, bearer(p.token))).status).toBe(403);
      expect((await call(relay, 'PATCH', '/voice/realtime/config', { enabled: true })).status).toBe(200);
      const created = await call(relay, 'POST', '/voice/realtime/session', {}, bearer(p.token));
      expect(created.body).toMatchObject({ success: true, protocol: 'svc.voice.realtime.v0', provider: 'offline' });
      const id = created.body.session_id as string;
      expect(created.body.websocket_path).toBe(`/voice/realtime/${id}`);
      // An output-session path does not open a realtime session.
      expect(await rejectedOrOpen(new WebSocket(`${relay.url.replace('http', 'ws')}/voice/output/${id}`, { headers: bearer(p.token) }))).toBe(404);
      const ws = new WebSocket(`${relay.url.replace('http', 'ws')}/voice/realtime/${id}`, { headers: bearer(p.token) });
      const got: Array<Record<string, any>> = [];
      ws.on('message', (d) => got.push(JSON.parse(String(d))));
      await until(() => got.length > 0);
      expect(got[0]).toMatchObject({ type: 'voice.session.ready', protocol: 'svc.voice.realtime.v0' });
      ws.send(JSON.stringify({ type: 'input_audio.append', audio_base64: Buffer.alloc(4800).toString('base64'), sample_rate: 24000 }));
      ws.send(JSON.stringify({ type: 'input_audio.append', audio_base64: '!!!' }));
      await until(() => got.some((f) => f.type === 'voice.error'));
      expect(got.find((f) => f.type === 'voice.input_audio.received')).toMatchObject({ byte_count: 4800, total_bytes: 4800, sample_rate: 24000 });
      for (const text of ['first answer', 'second answer']) {
        const n = got.filter((f) => f.type === 'voice.response.done').length;
        ws.send(JSON.stringify({ type: 'response.create', text }));
        await until(() => got.filter((f) => f.type === 'voice.response.done').length === n + 1);
      }
      expect(got.filter((f) => f.type === 'voice.response.started')[0]).toMatchObject({ input_audio_bytes: 4800, render_mode: 'conversation' });
      ws.close();
      await until(() => readEvents(relay.home).some((e) => e.type === 'voice.session_ended' && e.data.sessionId === id));
      expect(readEvents(relay.home).find((e) => e.type === 'voice.session_created' && e.data.sessionId === id)!.data).toMatchObject({
        kind: 'realtime',
      });
    } finally {
      await relay.close();
    }
  });

  it("renders through the provider's realtime WebSocket (a real ws server standing in for it): audio deltas, the transcript, errors", async () => {
    const { WebSocketServer } = await import('ws');
    const server = http.createServer();
    const wss = new WebSocketServer({ server });
    const seen: Array<{ url: string; auth: string | undefined; beta: string | undefined; frames: any[] }> = [];
    wss.on('connection', (sock, req) => {
      const rec = { url: req.url!, auth: req.headers.authorization, beta: req.headers['openai-beta'] as string | undefined, frames: [] as any[] };
      seen.push(rec);
      let heard = 0;
      sock.on('message', (d) => {
        const f = JSON.parse(String(d));
        rec.frames.push(f);
        if (f.type === 'input_audio_buffer.append') heard += Buffer.from(f.audio, 'base64').length;
        if (f.type === 'input_audio_buffer.commit')
          sock.send(JSON.stringify({ type: 'conversation.item.input_audio_transcription.completed', transcript: `heard ${heard} bytes` }));
        if (f.type !== 'response.create') return;
        const typed = rec.frames.filter((x) => x.type === 'conversation.item.create').at(-1)?.item.content[0].text as string | undefined;
        const text = rec.frames.at(-2)?.type === 'conversation.item.create' ? typed! : `your audio (${heard} bytes)`;
        if (text === 'fail please') return sock.send(JSON.stringify({ type: 'error', error: { message: 'provider says no' } }));
        for (let i = 0; i < 5; i++) sock.send(JSON.stringify({ type: 'response.audio.delta', delta: Buffer.alloc(4800, i + 1).toString('base64') }));
        sock.send(JSON.stringify({ type: 'response.audio_transcript.done', transcript: `spoken: ${text}` }));
        sock.send(JSON.stringify({ type: 'response.done' }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    const relay = await startRelay({ env: { OPENAI_API_KEY: 'sk-realtime-test', OPENAI_BASE_URL: base, RELAY_REALTIME_VOICE_ENABLED: '1' } });
    try {
      const p = await pairPhone(relay);
      p.phone.close();
      const id = (await call(relay, 'POST', '/voice/realtime/session', { voice: 'verse' }, bearer(p.token))).body.session_id as string;
      const ws = new WebSocket(`${relay.url.replace('http', 'ws')}/voice/realtime/${id}`, { headers: bearer(p.token) });
      const got: Array<Record<string, any>> = [];
      ws.on('message', (d) => got.push(JSON.parse(String(d))));
      await until(() => got.length > 0);
      ws.send(JSON.stringify({ type: 'response.create', text: 'say hello' }));
      await until(() => got.some((f) => f.type === 'voice.response.done'));
      const deltas = got.filter((f) => f.type === 'voice.audio.delta');
      expect(deltas.reduce((n, d) => n + d.byte_count, 0)).toBe(24000);
      expect(deltas[0]).toMatchObject({ sample_rate: 24000, byte_count: 4800 });
      expect(got.find((f) => f.type === 'voice.transcript.final')).toMatchObject({ text: 'spoken: say hello' });
      expect(seen[0]).toMatchObject({ url: '/v1/realtime?model=gpt-4o-realtime-preview', auth: 'Bearer sk-realtime-test', beta: 'realtime=v1' });
      expect(seen[0].frames[0]).toMatchObject({ type: 'session.update', session: { voice: 'verse', output_audio_format: 'pcm16' } });
      // The mic: forwarded to the provider on the same connection, committed, transcribed, answered.
      ws.send(JSON.stringify({ type: 'input_audio.append', audio_base64: Buffer.alloc(9600, 3).toString('base64'), sample_rate: 24000 }));
      ws.send(JSON.stringify({ type: 'input_audio.commit' }));
      await until(() => got.some((f) => f.type === 'voice.input_transcript.final'));
      expect(got.find((f) => f.type === 'voice.input_transcript.final')).toMatchObject({ text: 'heard 9600 bytes' });
      const n = got.filter((f) => f.type === 'voice.response.done').length;
      ws.send(JSON.stringify({ type: 'response.create' }));
      await until(() => got.filter((f) => f.type === 'voice.response.done').length === n + 1);
      expect(got.filter((f) => f.type === 'voice.transcript.final').at(-1)).toMatchObject({ text: 'spoken: your audio (9600 bytes)' });
      expect(seen).toHaveLength(1);
      ws.send(JSON.stringify({ type: 'response.create', text: 'fail please' }));
      await until(() => got.some((f) => f.type === 'voice.error'));
      expect(got.find((f) => f.type === 'voice.error')!.message).toContain('provider says no');
      ws.close();
    } finally {
      await relay.close();
      wss.close();
      await new Promise((r) => server.close(r));
    }
  });
});

describe('the realtime-agent broker (fallback engine: speech -> text -> the agent API -> speech)', () => {
  const until = async (pred: () => boolean, ms = 15_000) => {
    const end = Date.now() + ms;
    while (!pred()) {
      if (Date.now() > end) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  let api: http.Server;
  const asked: Array<{ auth: string | undefined; session: string | undefined; body: any }> = [];
  let relay: TestRelay;
  let token: string;
  beforeAll(async () => {
    api = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString() || '{}');
        asked.push({ auth: req.headers.authorization, session: req.headers['x-hermes-session-id'] as string | undefined, body });
        if (req.url !== '/v1/chat/completions') {
          res.statusCode = 404;
          return res.end('{}');
        }
        const last = body.messages.at(-1).content as string;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: `The agent heard: **${last}**` } }] }));
      });
    });
    await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
    relay = await startRelay({
      env: {
        VOICE_TOOLS_OPENAI_KEY: '',
        OPENAI_API_KEY: '',
        API_SERVER_KEY: API_KEY,
        RELAY_WEBAPI_URL: `http://127.0.0.1:${(api.address() as AddressInfo).port}`,
        RELAY_REALTIME_VOICE_ENABLED: '1',
      },
    });
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
  });
  afterAll(async () => {
    await relay.close();
    await new Promise((r) => api.close(r));
  });

  it('binds the session to its chat session id and context; a spoken turn is transcribed, answered by the agent, mirrored and spoken', async () => {
    const created = await call(
      relay,
      'POST',
      '/voice/realtime-agent/session',
      {
        chat_session_id: 'chat-42',
        context_messages: [
          { role: 'user', content: 'earlier question' },
          { role: 'assistant', content: 'earlier answer' },
        ],
      },
      bearer(token),
    );
    expect(created.body).toMatchObject({
      success: true,
      protocol: 'svc.voice.realtime_agent.v0',
      chat_session_id: 'chat-42',
      broker_mode: 'fallback_engine',
      tool_surface: [],
    });
    const id = created.body.session_id as string;
    expect(created.body.websocket_path).toBe(`/voice/realtime-agent/${id}`);
    const ws = new WebSocket(`${relay.url.replace('http', 'ws')}/voice/realtime-agent/${id}`, { headers: bearer(token) });
    const got: Array<Record<string, any>> = [];
    ws.on('message', (d) => got.push(JSON.parse(String(d))));
    await until(() => got.length > 0);
    expect(got[0]).toMatchObject({ type: 'voice.session.ready', protocol: 'svc.voice.realtime_agent.v0' });

    // The mic: "hello world" as 24 kHz 16-bit PCM in 100 ms appends, then commit.
    const { readWav: rw, resample: rs, writeWav16: ww } = await import('../../apps/relay/src/voice/wav');
    const pcm = ww(rs(rw(spokenWav('hello world')), 24000)).subarray(44);
    for (let i = 0; i < pcm.length; i += 4800)
      ws.send(JSON.stringify({ type: 'input_audio.append', audio_base64: pcm.subarray(i, i + 4800).toString('base64'), sample_rate: 24000 }));
    ws.send(JSON.stringify({ type: 'input_audio.commit' }));
    await until(() => got.some((f) => f.type === 'voice.response.done' || f.type === 'voice.error'));
    const heard = got.find((f) => f.type === 'voice.input_transcript.final')!;
    expect(heard.text).toMatch(/hello|world/);
    const types = got.map((f) => f.type);
    expect(types.indexOf('svc.run.started')).toBeGreaterThan(types.indexOf('voice.input_transcript.final'));
    expect(got.find((f) => f.type === 'voice.response.delta')).toMatchObject({
      delta: `The agent heard: **${heard.text}**`,
      source: 'svc',
      delivery: 'final',
    });
    expect(got.filter((f) => f.type === 'voice.output_audio.delta').length).toBeGreaterThan(5);
    expect(types.slice(-2)).toEqual(['voice.output_audio.done', 'voice.response.done']);
    expect(asked[0]).toMatchObject({ auth: `Bearer ${API_KEY}`, session: 'chat-42' });
    expect(asked[0].body.messages).toEqual([
      { role: 'user', content: 'earlier question' },
      { role: 'assistant', content: 'earlier answer' },
      { role: 'user', content: heard.text },
    ]);

    // A typed turn continues the same conversation.
    const n = got.length;
    ws.send(JSON.stringify({ type: 'response.create', text: 'second question' }));
    await until(() => got.slice(n).some((f) => f.type === 'voice.response.done'));
    expect(asked[1].body.messages.slice(-2)).toEqual([
      { role: 'assistant', content: `The agent heard: **${heard.text}**` },
      { role: 'user', content: 'second question' },
    ]);
    ws.send(JSON.stringify({ type: 'input_audio.commit' }));
    await until(() => got.slice(n).some((f) => f.type === 'voice.error'));
    expect(got.slice(n).find((f) => f.type === 'voice.error')!.message).toContain('no audio');
    ws.close();
    await until(() => readEvents(relay.home).some((e) => e.type === 'voice.session_ended' && e.data.sessionId === id));
    expect(
      readEvents(relay.home)
        .map((e) => JSON.stringify(e))
        .join(''),
    ).not.toContain('second question');
  });

  it('refuses bad session bodies (400) and says when the agent API cannot be reached', async () => {
    for (const [body, error] of [
      [{ chat_session_id: '../x' }, 'chat_session_id must be 1-128 letters, digits, "_", ".", ":" or "-"'],
      [{ context_messages: 'no' }, 'context_messages must be a list'],
      [{ context_messages: null }, 'context_messages must be a list'],
      [{ context_messages: [{ role: 'tool', content: 'x' }] }, 'each context message is {"role": "user"|"assistant"|"system", "content": "..."}'],
    ] as const) {
      const r = await call(relay, 'POST', '/voice/realtime-agent/session', body, bearer(token));
      expect(r).toMatchObject({ status: 400, body: { ok: false, success: false, code: 'validation_failed', error } });
    }
    const down = await startRelay({
      env: { RELAY_WEBAPI_URL: 'http://127.0.0.1:1', RELAY_REALTIME_VOICE_ENABLED: '1', VOICE_TOOLS_OPENAI_KEY: '', OPENAI_API_KEY: '' },
    });
    try {
      const p = await pairPhone(down);
      p.phone.close();
      const id = (await call(down, 'POST', '/voice/realtime-agent/session', {}, bearer(p.token))).body.session_id as string;
      const ws = new WebSocket(`${down.url.replace('http', 'ws')}/voice/realtime-agent/${id}`, { headers: bearer(p.token) });
      const got: Array<Record<string, any>> = [];
      ws.on('message', (d) => got.push(JSON.parse(String(d))));
      await until(() => got.length > 0);
      ws.send(JSON.stringify({ type: 'response.create', text: 'anyone there?' }));
      await until(() => got.some((f) => f.type === 'voice.error'));
      expect(got.find((f) => f.type === 'voice.error')).toMatchObject({ code: 'voice.agent_unreachable' });
      expect(got.find((f) => f.type === 'voice.error')!.message).toContain('cannot reach the agent API at http://127.0.0.1:1');
      ws.close();
    } finally {
      await down.close();
    }
  });
});

describe('providers that hang or die: bounded time, a clean error, nothing left behind, the relay keeps serving', () => {
  /** Processes whose command line contains `pattern` (read from /proc: no procps needed). */
  const pgrep = (pattern: string) =>
    fs
      .readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .filter((d) => {
        try {
          return fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').join(' ').includes(pattern);
        } catch {
          return false;
        }
      })
      .join(' ');

  it('a hanging espeak-ng is killed at RELAY_VOICE_TIMEOUT_SECONDS (504); one that dies mid-stream ends the stream with voice.error', async () => {
    const bin = fs.mkdtempSync(path.join(tempHome(), 'bin-'));
    fs.writeFileSync(
      path.join(bin, 'espeak-ng'),
      '#!/bin/sh\nif [ "$2" = "en-gb" ]; then printf "RIFF\\377\\377\\377\\177WAVEfmt \\020\\000\\000\\000"; head -c 20000 /dev/zero; exit 3; fi\nexec sleep 31.25\n',
      { mode: 0o755 },
    );
    fs.symlinkSync('/usr/bin/lame', path.join(bin, 'lame'));
    const relay = await startRelay({
      env: { RELAY_VOICE_OFFLINE_BIN_DIR: bin, RELAY_VOICE_TIMEOUT_SECONDS: '1', VOICE_TOOLS_OPENAI_KEY: '', OPENAI_API_KEY: '' },
    });
    try {
      const p = await pairPhone(relay);
      p.phone.close();
      const t0 = Date.now();
      const r = await synth(relay, { text: 'this will hang' }, bearer(p.token));
      expect(r.status).toBe(504);
      expect(JSON.parse(r.bytes.toString())).toMatchObject({ ok: false, success: false, code: 'voice.provider_timeout' });
      // Cut at the 1 s bound: not before it, and long before the 31.25 s the program would sleep (1.0-1.1 s
      // quiet and beside two busy loops; the upper bound was 5 s, too close for a loaded machine).
      expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
      expect(Date.now() - t0).toBeLessThan(15_000);
      expect(pgrep('sleep 31.25')).toBe('');
      expect(
        readEvents(relay.home)
          .filter((e) => e.type === 'voice.synthesized')
          .at(-1)!.data,
      ).toMatchObject({ outcome: 'failed', error: 'voice.provider_timeout' });

      // Streaming: espeak-ng writes a little audio, then exits 3.
      const id = (await call(relay, 'POST', '/voice/output/session', { voice: 'en-gb' }, bearer(p.token))).body.session_id as string;
      const ws = new WebSocket(`${relay.url.replace('http', 'ws')}/voice/output/${id}`, { headers: bearer(p.token) });
      const got: Array<Record<string, any>> = [];
      ws.on('message', (d) => got.push(JSON.parse(String(d))));
      await new Promise((r2) => ws.once('open', r2));
      ws.send(JSON.stringify({ type: 'response.create', text: 'dies midway' }));
      const end = Date.now() + 5000;
      while (!got.some((f) => f.type === 'voice.error' || f.type === 'voice.response.done') && Date.now() < end)
        await new Promise((r2) => setTimeout(r2, 10));
      expect(got.some((f) => f.type === 'voice.audio.delta')).toBe(true);
      expect(got.find((f) => f.type === 'voice.error')).toMatchObject({ code: 'voice.synthesis_failed' });
      expect(got.find((f) => f.type === 'voice.error')!.message).toContain('exit 3');
      expect(got.some((f) => f.type === 'voice.response.done')).toBe(false);
      ws.close();
      expect((await fetch(`${relay.url}/health`)).status).toBe(200);
    } finally {
      await relay.close();
    }
  });

  it('an HTTP provider that never answers is cut at the bound (504), and no transcription temp file is left', async () => {
    const sockets: import('node:net').Socket[] = [];
    const server = http.createServer(() => undefined);
    server.on('connection', (s) => sockets.push(s));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const relay = await startRelay({
      env: {
        OPENAI_API_KEY: 'sk-hang',
        OPENAI_BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
        RELAY_VOICE_TIMEOUT_SECONDS: '1',
      },
    });
    try {
      const p = await pairPhone(relay);
      p.phone.close();
      const t0 = Date.now();
      const r = await synth(relay, { text: 'nobody home' }, bearer(p.token));
      expect(r.status).toBe(504);
      // Cut at the 1 s bound, not before; the provider never answers, so without the bound this waits for
      // the HTTP client's own minutes (1.0 s quiet and beside two busy loops).
      expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
      expect(Date.now() - t0).toBeLessThan(15_000);
      const t = await transcribe(relay, spokenWav('x'), 'audio/wav', bearer(p.token));
      expect(t.status).toBe(504);
      expect((await fetch(`${relay.url}/health`)).status).toBe(200);
    } finally {
      await relay.close();
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    }
    expect(fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith('svc-stt-'))).toEqual([]);
  });
});

describe('the realtime-agent broker, provider-native engine (a realtime provider with the narrow tool surface)', () => {
  const until = async (pred: () => boolean, ms = 10_000) => {
    const end = Date.now() + ms;
    while (!pred()) {
      if (Date.now() > end) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 10));
    }
  };

  it('forwards the mic, mirrors the input transcript, runs the run_task tool (called in either spelling) through the agent API and speaks the answer', async () => {
    const { WebSocketServer } = await import('ws');
    // The agent host's API.
    const asked: any[] = [];
    const agentApi = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        asked.push({ session: req.headers['x-hermes-session-id'], body: JSON.parse(Buffer.concat(chunks).toString()) });
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ choices: [{ message: { content: 'It is sunny in Lisbon.' } }] }));
      });
    });
    await new Promise<void>((r) => agentApi.listen(0, '127.0.0.1', r));
    // The realtime provider: transcribes the committed audio, calls hermes_run_task, then speaks the tool's output.
    // Its HTTP side has no model list (discovery falls back to the static options at once).
    const server = http.createServer((_req, res) => {
      res.statusCode = 404;
      res.end('{}');
    });
    const wss = new WebSocketServer({ server });
    const frames: any[] = [];
    wss.on('connection', (sock) => {
      let bytes = 0;
      const out = (f: object) => sock.send(JSON.stringify(f));
      sock.on('message', (d) => {
        const f = JSON.parse(String(d));
        frames.push(f);
        if (f.type === 'input_audio_buffer.append') bytes += Buffer.from(f.audio, 'base64').length;
        if (f.type === 'input_audio_buffer.commit')
          out({ type: 'conversation.item.input_audio_transcription.completed', transcript: `weather in lisbon (${bytes} bytes)` });
        if (f.type !== 'response.create') return;
        const toolOutput = frames.filter((x) => x.type === 'conversation.item.create' && x.item.type === 'function_call_output').at(-1);
        out({ type: 'response.created' });
        if (!toolOutput) {
          out({
            type: 'response.function_call_arguments.done',
            name: 'hermes_run_task',
            call_id: 'call-1',
            arguments: JSON.stringify({ task: 'what is the weather in Lisbon' }),
          });
        } else {
          for (let i = 0; i < 3; i++) out({ type: 'response.audio.delta', delta: Buffer.alloc(4800, i + 1).toString('base64') });
          out({ type: 'response.audio_transcript.delta', delta: toolOutput.item.output });
        }
        out({ type: 'response.done' });
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const relay = await startRelay({
      env: {
        OPENAI_API_KEY: 'sk-native',
        OPENAI_BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
        RELAY_WEBAPI_URL: `http://127.0.0.1:${(agentApi.address() as AddressInfo).port}`,
        RELAY_REALTIME_VOICE_ENABLED: '1',
      },
    });
    try {
      const p = await pairPhone(relay);
      p.phone.close();
      const config = await call(relay, 'GET', '/voice/realtime-agent/config', undefined, bearer(p.token));
      expect(config.body).toMatchObject({
        broker_mode: 'provider_realtime',
        tool_surface: ['svc_run_task', 'svc_get_status', 'svc_cancel', 'svc_confirm'],
      });
      const created = await call(relay, 'POST', '/voice/realtime-agent/session', { chat_session_id: 'chat-7' }, bearer(p.token));
      expect(created.body).toMatchObject({
        broker_mode: 'provider_realtime',
        tool_surface: ['svc_run_task', 'svc_get_status', 'svc_cancel', 'svc_confirm'],
      });
      const ws = new WebSocket(`${relay.url.replace('http', 'ws')}/voice/realtime-agent/${created.body.session_id}`, { headers: bearer(p.token) });
      const got: Array<Record<string, any>> = [];
      ws.on('message', (d) => got.push(JSON.parse(String(d))));
      await until(() => got.length > 0);
      ws.send(
        JSON.stringify({ type: 'input_audio.append', chunk_id: 1, sample_rate: 16000, audio_base64: Buffer.alloc(9600, 1).toString('base64') }),
      );
      ws.send(JSON.stringify({ type: 'input_audio.commit' }));
      await until(() => got.filter((f) => f.type === 'voice.response.done').length === 2);
      const types = got.map((f) => f.type);
      // 9,600 bytes at 16 kHz reach the provider as 14,400 bytes at its 24 kHz.
      expect(got.find((f) => f.type === 'voice.input_transcript.final')).toMatchObject({ text: 'weather in lisbon (14400 bytes)' });
      expect(got.find((f) => f.type === 'voice.input_audio.received')).toMatchObject({ byte_count: 9600, input_chunk_id: 1, sample_rate: 16000 });
      expect(got.find((f) => f.type === 'voice.tool.requested')).toMatchObject({
        name: 'hermes_run_task',
        call_id: 'call-1',
        arguments: { task: 'what is the weather in Lisbon' },
      });
      expect(types.indexOf('svc.run.started')).toBeLessThan(types.indexOf('svc.run.completed'));
      expect(got.find((f) => f.type === 'svc.run.completed')).toMatchObject({ chat_session_id: 'chat-7', text: 'It is sunny in Lisbon.' });
      expect(got.find((f) => f.type === 'voice.tool.completed')).toMatchObject({ name: 'hermes_run_task', ok: true });
      // As the app reads a tool call (VoiceViewModel.kt 3660-3740), in the relay's spelling; the name is the one called.
      expect(got.find((f) => f.type === 'svc.tool.started')).toMatchObject({
        tool_name: 'hermes_run_task',
        tool_call_id: 'call-1',
        chat_session_id: 'chat-7',
      });
      expect(got.find((f) => f.type === 'svc.tool.completed')).toMatchObject({ tool_name: 'hermes_run_task', success: true });
      expect(types.indexOf('svc.tool.started')).toBeLessThan(types.indexOf('svc.run.started'));
      expect(types.indexOf('svc.run.completed')).toBeLessThan(types.indexOf('svc.tool.completed'));
      expect(got.filter((f) => f.type === 'voice.output_audio.delta')).toHaveLength(3);
      expect(got.find((f) => f.type === 'voice.response.delta')).toMatchObject({ delta: 'It is sunny in Lisbon.', source: 'provider' });
      expect(asked[0]).toMatchObject({ session: 'chat-7' });
      expect(asked[0].body.messages.at(-1)).toEqual({ role: 'user', content: 'what is the weather in Lisbon' });
      const update = frames.find((f) => f.type === 'session.update');
      expect(update.session.tools.map((t: { name: string }) => t.name)).toEqual(['svc_run_task', 'svc_get_status', 'svc_cancel', 'svc_confirm']);
      expect(frames.find((f) => f.type === 'conversation.item.create' && f.item.type === 'function_call_output').item).toMatchObject({
        call_id: 'call-1',
        output: 'It is sunny in Lisbon.',
      });
      ws.close();
    } finally {
      await relay.close();
      wss.close();
      server.closeAllConnections();
      agentApi.closeAllConnections();
      await new Promise((r) => server.close(r));
      await new Promise((r) => agentApi.close(r));
    }
  });
});
