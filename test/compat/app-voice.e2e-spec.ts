import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { bearer, pairPhone, readEvents, tempHome, type TestRelay } from '../support/harness';
import { call, REMOTE, type Json } from '../support/http';
import { AppVoiceSocket, streamingAgent, streamOf, until } from '../support/voice-client';
import { startRelay } from './client-relay';

/**
 * The phone app's voice settings screens, its voice-output resume and the realtime agent's progress, as the
 * app decodes and drives them (Codename-11/hermes-relay
 * app/src/main/kotlin/com/hermesandroid/relay/network/relay/RelayVoiceClient.kt, RVC below). The app
 * decodes with `Json { ignoreUnknownKeys = true; isLenient = true }` (RVC:107): our extra fields are
 * harmless, but a declared field of the wrong type, or null where the type is not nullable, fails the
 * whole answer, so each decoder below checks every field the data class declares, with its type.
 */
jest.setTimeout(60_000);

type Decoded = Record<string, unknown>;

/** One field of a data class: `kind` its Kotlin type, `nullable` when it ends in `?`, absent fields take the default. */
function field(o: Json, k: string, kind: 'String' | 'Boolean' | 'Int' | 'Long' | 'Object', nullable: boolean, where: string): unknown {
  const v = o[k];
  if (v === undefined) return undefined;
  if (v === null) {
    if (nullable) return null;
    throw new Error(`${where}.${k}: null for a non-null ${kind}`);
  }
  const ok =
    kind === 'String'
      ? typeof v === 'string'
      : kind === 'Boolean'
        ? typeof v === 'boolean'
        : kind === 'Int'
          ? Number.isInteger(v) && Math.abs(v) <= 2 ** 31 - 1
          : kind === 'Long'
            ? Number.isSafeInteger(v)
            : typeof v === 'object' && !Array.isArray(v);
  if (!ok) throw new Error(`${where}.${k}: expected ${kind}${nullable ? '?' : ''}, got ${JSON.stringify(v)}`);
  return v;
}
function list<T>(o: Json, k: string, where: string, each: (x: unknown, w: string) => T): T[] {
  const v = o[k];
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new Error(`${where}.${k}: expected a List, got ${JSON.stringify(v)}`);
  return v.map((x, i) => each(x, `${where}.${k}[${i}]`));
}
const aString = (x: unknown, w: string) => {
  if (typeof x !== 'string') throw new Error(`${w}: expected String, got ${JSON.stringify(x)}`);
  return x;
};
const anInt = (x: unknown, w: string) => {
  if (!Number.isInteger(x)) throw new Error(`${w}: expected Int, got ${JSON.stringify(x)}`);
  return x as number;
};
function stringMap(o: Json, k: string, where: string): Record<string, string> {
  const v = field(o, k, 'Object', false, where) as Json | undefined;
  for (const [key, val] of Object.entries(v ?? {})) aString(val, `${where}.${k}.${key}`);
  return (v ?? {}) as Record<string, string>;
}
function fields(o: unknown, where: string, spec: Record<string, ['String' | 'Boolean' | 'Int' | 'Long' | 'Object', boolean]>): Decoded {
  if (typeof o !== 'object' || o === null || Array.isArray(o)) throw new Error(`${where}: expected an object`);
  const out: Decoded = {};
  for (const [k, [kind, nullable]] of Object.entries(spec)) out[k] = field(o as Json, k, kind, nullable, where);
  return out;
}

/** RVC:3173-3199 `RealtimeProviderInfo`: `id: String` required; lists of strings; label maps; `supports_*` flags. */
function realtimeProviderInfo(o: unknown, where = 'RealtimeProviderInfo'): Decoded {
  const d = fields(o, where, {
    id: ['String', false],
    name: ['String', true],
    status: ['String', true],
    description: ['String', true],
    requires_manual_id: ['Boolean', false],
    supports_tts: ['Boolean', false],
    supports_stt: ['Boolean', false],
    supports_speech_to_speech: ['Boolean', false],
    supports_tool_use: ['Boolean', false],
    supports_realtime: ['Boolean', false],
    supports_realtime_agent_native: ['Boolean', false],
    supports_interruption: ['Boolean', false],
    supports_expression: ['Boolean', false],
  });
  if (d.id === undefined) throw new Error(`${where}.id: required`);
  const j = o as Json;
  return {
    ...d,
    models: list(j, 'models', where, aString),
    voices: list(j, 'voices', where, aString),
    languages: list(j, 'languages', where, aString),
    sample_rates: list(j, 'sample_rates', where, anInt),
    recommended_voices: list(j, 'recommended_voices', where, aString),
    model_labels: stringMap(j, 'model_labels', where),
    voice_labels: stringMap(j, 'voice_labels', where),
    language_labels: stringMap(j, 'language_labels', where),
  };
}

/** RVC:3132-3150 `RealtimeVoiceConfig` (the realtime and realtime-agent screens), with RVC:3154-3170 `promotion` when sent. */
function realtimeVoiceConfig(o: Json): Decoded {
  const d = fields(o, 'RealtimeVoiceConfig', {
    success: ['Boolean', false],
    enabled: ['Boolean', false],
    protocol: ['String', true],
    config_path: ['String', true],
    default_provider: ['String', true],
    default_model: ['String', true],
    default_voice: ['String', true],
    sample_rate: ['Int', false],
    auth: ['Object', true],
    profile: ['String', true],
    config_scope: ['String', true],
    fallback_to_global: ['Boolean', false],
    promotion: ['Object', true],
  });
  if (o.promotion)
    fields(o.promotion, 'RealtimeVoicePromotion', {
      enabled: ['Boolean', false],
      promote_after_ms: ['Int', false],
      background_default_mode: ['String', false],
      spoken_handoff: ['Boolean', false],
      progress_spoken_after_ms: ['Int', false],
      progress_repeat_ms: ['Int', false],
      result_delivery: ['String', false],
      max_background_runs: ['Int', false],
    });
  return { ...d, providers: list(o, 'providers', 'RealtimeVoiceConfig', (x, w) => realtimeProviderInfo(x, w)) };
}

/** RVC:3290-3315 `VoiceOutputConfig` (the voice output screen). */
function voiceOutputConfig(o: Json): Decoded {
  const d = fields(o, 'VoiceOutputConfig', {
    success: ['Boolean', false],
    enabled: ['Boolean', false],
    protocol: ['String', true],
    config_path: ['String', true],
    default_provider: ['String', true],
    default_model: ['String', true],
    default_voice: ['String', true],
    sample_rate: ['Int', false],
    language: ['String', false],
    codec: ['String', false],
    optimize_streaming_latency: ['Int', false],
    text_normalization: ['Boolean', false],
    auto_speech_tags: ['Boolean', false],
    fallback_enabled: ['Boolean', false],
    fallback_provider: ['String', true],
    auth: ['Object', true],
    profile: ['String', true],
    config_scope: ['String', true],
    fallback_to_global: ['Boolean', false],
  });
  return { ...d, providers: list(o, 'providers', 'VoiceOutputConfig', (x, w) => realtimeProviderInfo(x, w)) };
}

/** RVC:3221-3240 `VoiceProviderOptionsResponse`: `provider` is a RealtimeProviderInfo; RVC:3242-3253 `dynamic`. */
function providerOptionsResponse(o: Json): Decoded {
  const d = fields(o, 'VoiceProviderOptionsResponse', {
    success: ['Boolean', false],
    mode: ['String', true],
    protocol: ['String', true],
    schema_version: ['Int', false],
    provider_id: ['String', true],
    default_provider: ['String', true],
    default_model: ['String', true],
    default_voice: ['String', true],
    sample_rate: ['Int', false],
    language: ['String', true],
    profile: ['String', true],
    config_scope: ['String', true],
    fallback_to_global: ['Boolean', false],
    dynamic: ['Object', true],
  });
  if (o.dynamic)
    fields(o.dynamic, 'ProviderOptionsDynamic', {
      attempted: ['Boolean', false],
      status: ['String', true],
      source: ['String', true],
      message: ['String', true],
      voice_count: ['Int', true],
      custom_voice_count: ['Int', true],
      model_count: ['Int', true],
      cache: ['String', true],
      cache_ttl_seconds: ['Int', true],
      auth_source: ['String', true],
    });
  return {
    ...d,
    provider: o.provider === undefined || o.provider === null ? null : realtimeProviderInfo(o.provider, 'VoiceProviderOptionsResponse.provider'),
  };
}

/** RVC:3256-3270 `VoiceProviderValidationResponse`, RVC:3272-3277 `ProviderValidationCheck {id?, status?, message?}`. */
function validationResponse(o: Json): Decoded & { checks: Decoded[] } {
  const d = fields(o, 'VoiceProviderValidationResponse', {
    success: ['Boolean', false],
    mode: ['String', true],
    protocol: ['String', true],
    provider_id: ['String', true],
    model: ['String', true],
    voice: ['String', true],
    sample_rate: ['Int', true],
    language: ['String', true],
    valid: ['Boolean', false],
    summary: ['String', true],
    dynamic: ['Object', true],
  });
  const checks = list(o, 'checks', 'VoiceProviderValidationResponse', (x, w) =>
    fields(x, w, { id: ['String', true], status: ['String', true], message: ['String', true] }),
  );
  return { ...d, checks };
}

/** RVC:3352-3373 `VoiceOutputSessionResponse` (RVC:3327-3350 `RealtimeSessionResponse` is the same shape). */
function sessionResponse(o: Json, where = 'VoiceOutputSessionResponse'): Decoded {
  const d = fields(o, where, {
    success: ['Boolean', false],
    session_id: ['String', false],
    websocket_path: ['String', false],
    resume_token: ['String', true],
    resume_supported: ['Boolean', false],
    resume_ttl_ms: ['Long', false],
    provider: ['String', false],
    model: ['String', false],
    voice: ['String', false],
    sample_rate: ['Int', false],
    event_log_path: ['String', true],
    profile: ['String', true],
    config_scope: ['String', true],
  });
  for (const k of ['session_id', 'websocket_path', 'provider', 'model', 'voice']) if (d[k] === undefined) throw new Error(`${where}.${k}: required`);
  return d;
}

/** RVC:3071-3082 `VoiceConfig` and RVC:3085-3101 `VoiceProviderInfo` (GET /voice/config). */
function voiceConfig(o: Json): Decoded {
  const d = fields(o, 'VoiceConfig', {
    success: ['Boolean', false],
    tts: ['Object', true],
    stt: ['Object', true],
    profile: ['String', true],
    config_scope: ['String', true],
    config_path: ['String', true],
    fallback_to_global: ['Boolean', false],
  });
  for (const k of ['tts', 'stt'])
    if (o[k])
      fields(o[k], `VoiceConfig.${k}`, {
        provider: ['String', true],
        model: ['String', true],
        voice: ['String', true],
        voice_id: ['String', true],
        enabled: ['Boolean', false],
        available: ['Boolean', false],
        enhanced: ['Object', true],
      });
  return d;
}

/**
 * desktop/src/commands/voice.ts:235-255 `formatRealtime`, without the colours: what `hermes-relay voice
 * status` prints for GET /voice/realtime/config.
 */
function desktopRealtimeLines(rt: Json): string[] {
  const provider = rt.default_provider ?? '(none)';
  const model = rt.default_model ? ` · ${rt.default_model}` : '';
  const voice = rt.default_voice ? ` · voice=${rt.default_voice}` : '';
  const rate = rt.sample_rate ? ` @ ${rt.sample_rate}Hz` : '';
  const lines = [`  ${rt.enabled ? '●' : '○'} Realtime: ${provider}${model}${voice}${rate}`];
  const providers = ((rt.providers ?? []) as Json[]).filter((p) => p.status && p.status !== 'unavailable');
  if (providers.length > 0) lines.push(`      available: ${providers.map((p) => p.name ?? p.id).join(', ')}`);
  return lines;
}

describe("compat: the app's voice settings screens decode every answer", () => {
  let relay: TestRelay;
  let token: string;
  let home: string;
  let openaiApi: http.Server;
  const asApp = () => ({ ...bearer(token), ...REMOTE, accept: 'application/json' });
  const sections = [
    ['output', '/voice/output', voiceOutputConfig],
    ['realtime', '/voice/realtime', realtimeVoiceConfig],
    ['realtime-agent', '/voice/realtime-agent', realtimeVoiceConfig],
  ] as const;

  beforeAll(async () => {
    // An OpenAI-compatible API that lists no models: both providers are available, options static.
    openaiApi = http.createServer((_req, res) => {
      res.statusCode = 404;
      res.end('{}');
    });
    await new Promise<void>((r) => openaiApi.listen(0, '127.0.0.1', r));
    home = tempHome();
    fs.mkdirSync(path.join(home, 'profiles', 'work'), { recursive: true });
    fs.writeFileSync(path.join(home, 'profiles', 'work', 'config.yaml'), 'tts:\n  provider: espeak-ng\n  voice: en-gb\n');
    relay = await startRelay({
      home,
      env: {
        OPENAI_API_KEY: 'sk-compat-voice',
        VOICE_TOOLS_OPENAI_KEY: '',
        OPENAI_BASE_URL: `http://127.0.0.1:${(openaiApi.address() as AddressInfo).port}/v1`,
      },
    });
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
  });
  afterAll(async () => {
    await relay.close();
    openaiApi.closeAllConnections();
    await new Promise((r) => openaiApi.close(r));
  });

  it.each(sections)(
    'GET %s config (RVC getVoiceOutputConfig 637-672, getRealtimeVoiceConfig 367-400) decodes, providers a list of objects',
    async (_n, base, decode) => {
      for (const q of ['', '?profile=work']) {
        const r = await call(relay, 'GET', `${base}/config${q}`, undefined, asApp());
        expect(r.status).toBe(200);
        const c = decode(r.body);
        // The work profile names espeak-ng for tts, which its voice output follows; the rest is the relay's default (openai).
        const provider = q !== '' && base === '/voice/output' ? 'offline' : 'openai';
        expect(c).toMatchObject({ success: true, default_provider: provider, protocol: expect.stringMatching(/^hermes\.voice\./) });
        expect(typeof c.default_model).toBe('string');
        expect(typeof c.default_voice).toBe('string');
        const providers = c.providers as Decoded[];
        expect(providers.map((p) => p.id)).toEqual(['offline', 'openai']);
        expect(providers.every((p) => p.status === 'available')).toBe(true);
        const openai = providers.find((p) => p.id === 'openai')!;
        expect(providers.find((p) => p.id === provider)!.models).toContain(c.default_model);
        expect(openai.voices).toContain('alloy');
        expect(openai).toMatchObject({ supports_realtime_agent_native: true, supports_speech_to_speech: true });
        expect(providers.find((p) => p.id === 'offline')).toMatchObject({ supports_tts: true, supports_realtime_agent_native: false });
      }
      // The realtime sections list realtime models, the output section speech models.
      const openai = ((await call(relay, 'GET', `${base}/config`, undefined, asApp())).body.providers as Json[]).find((p) => p.id === 'openai')!;
      expect(openai.models.every((m: string) => /realtime/.test(m) === (base !== '/voice/output'))).toBe(true);
    },
  );

  it('GET /voice/config (RVC getVoiceConfig 317-360) decodes', async () => {
    const r = await call(relay, 'GET', '/voice/config', undefined, asApp());
    expect(voiceConfig(r.body)).toMatchObject({ success: true });
  });

  it.each(sections)('%s providers/{id}/options answers provider as an object (RVC 402-445, 680-720) and keeps provider_id', async (_n, base) => {
    for (const id of ['offline', 'openai']) {
      const r = await call(relay, 'GET', `${base}/providers/${id}/options?profile=work`, undefined, asApp());
      expect(r.status).toBe(200);
      const o = providerOptionsResponse(r.body);
      expect(o).toMatchObject({ success: true, provider_id: id, provider: { id }, profile: 'work', mode: expect.any(String) });
      expect(((o.provider as Decoded).voices as string[]).length).toBeGreaterThan(0);
    }
    expect((await call(relay, 'GET', `${base}/providers/elevenlabs/options`, undefined, asApp())).status).toBe(404);
  });

  it.each(sections)(
    '%s providers/{id}/validate answers checks as [{id, status, message}] (RVC 447-500, 722-770; VoiceSettingsScreen.kt validationIssue 4953-4962)',
    async (_n, base) => {
      const config = (await call(relay, 'GET', `${base}/config`, undefined, asApp())).body;
      // What the screen sends on Save: the selected provider, model, voice and sample rate (and profile).
      const good = validationResponse(
        (
          await call(
            relay,
            'POST',
            `${base}/providers/openai/validate`,
            { model: config.default_model, voice: config.default_voice, sample_rate: config.sample_rate },
            asApp(),
          )
        ).body,
      );
      expect(good).toMatchObject({ success: true, valid: true, provider_id: 'openai' });
      expect(good.checks.every((c) => c.status === 'ok')).toBe(true);
      const bad = validationResponse(
        (await call(relay, 'POST', `${base}/providers/offline/validate`, { model: 'espeak-ng', voice: 'en-us', sample_rate: 8000 }, asApp())).body,
      );
      expect(bad.valid).toBe(false);
      // validationIssue shows the first error's message.
      expect(bad.checks.find((c) => c.status === 'error')).toMatchObject({ id: 'sample_rate_known', message: expect.stringContaining('22050') });
    },
  );

  it('the desktop CLI `voice status` shows the realtime provider instead of "(none)"', async () => {
    const lines = desktopRealtimeLines((await call(relay, 'GET', '/voice/realtime/config', undefined, bearer(token))).body);
    expect(lines[0]).toBe('  ○ Realtime: openai · gpt-4o-realtime-preview · voice=alloy @ 24000Hz');
    expect(lines[1]).toBe('      available: Offline (espeak-ng + pocketsphinx, on this host), OpenAI-compatible API');
  });

  it.each(['realtime', 'realtime-agent'])(
    '"Server default" (no ?profile=): the %s screen saves its selection with enabled as read, and flipping enabled is the operator\'s (403 naming it)',
    async (segment) => {
      const read = realtimeVoiceConfig((await call(relay, 'GET', `/voice/${segment}/config`, undefined, asApp())).body);
      // RVC updateRealtimeVoiceConfig 502-535 / VoiceSettingsScreen.kt 2838: enabled, provider, model, voice, sample_rate.
      const save = await call(
        relay,
        'PATCH',
        `/voice/${segment}/config`,
        { enabled: read.enabled, provider: 'openai', model: 'gpt-4o-mini-realtime-preview', voice: 'verse', sample_rate: 24000 },
        asApp(),
      );
      expect(save.status).toBe(200);
      expect(realtimeVoiceConfig(save.body)).toMatchObject({
        enabled: read.enabled,
        default_model: 'gpt-4o-mini-realtime-preview',
        default_voice: 'verse',
      });
      const changed = readEvents(relay.home)
        .filter((e) => e.type === 'voice.settings_changed')
        .at(-1)!;
      expect(changed.data).toEqual({
        section: segment === 'realtime' ? 'realtime_voice' : 'realtime_agent',
        scope: 'relay',
        profile: null,
        // provider and sample_rate were already those in effect: only what changed is recorded.
        changed: { model: 'gpt-4o-mini-realtime-preview', voice: 'verse' },
      });
      const flip = await call(relay, 'PATCH', `/voice/${segment}/config`, { enabled: !read.enabled, voice: 'alloy' }, asApp());
      expect(flip.status).toBe(403);
      expect(flip.body).toMatchObject({ ok: false, success: false, code: 'voice.relay_settings_operator_only', field: 'enabled' });
      expect(flip.body.error).toContain('"enabled"');
      expect((await call(relay, 'GET', `/voice/${segment}/config`, undefined, asApp())).body).toMatchObject({
        enabled: read.enabled,
        default_voice: 'verse',
      });
    },
  );

  it('the voice output screen saves the same way (RVC updateVoiceOutputConfig 772-840)', async () => {
    const read = voiceOutputConfig((await call(relay, 'GET', '/voice/output/config', undefined, asApp())).body);
    const save = await call(
      relay,
      'PATCH',
      '/voice/output/config',
      {
        enabled: read.enabled,
        provider: 'offline',
        model: 'espeak-ng',
        voice: 'en-gb',
        sample_rate: 22050,
        language: 'en',
        codec: 'pcm',
        optimize_streaming_latency: 1,
        auto_speech_tags: false,
        fallback_enabled: true,
      },
      asApp(),
    );
    expect(save.status).toBe(200);
    expect(voiceOutputConfig(save.body)).toMatchObject({ enabled: true, default_provider: 'offline', default_voice: 'en-gb', sample_rate: 22050 });
    expect((await call(relay, 'PATCH', '/voice/output/config', { enabled: false }, asApp())).status).toBe(403);
  });
});

describe('compat: voice resume and the realtime agent as the app runs them (hermes spelling)', () => {
  let relay: TestRelay;
  let token: string;
  let agent: Awaited<ReturnType<typeof streamingAgent>>;
  beforeAll(async () => {
    agent = await streamingAgent();
    relay = await startRelay({
      env: {
        VOICE_TOOLS_OPENAI_KEY: '',
        OPENAI_API_KEY: '',
        RELAY_WEBAPI_URL: agent.url,
        RELAY_REALTIME_VOICE_ENABLED: '1',
        API_SERVER_KEY: 'k'.repeat(32),
      },
    });
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
  });
  afterAll(async () => {
    await relay.close();
    await agent.close();
  });

  it('voice output (RVC runVoiceOutput 842-1130): stream, the socket drops mid-response, a new socket resumes, the missed frames then the rest arrive once', async () => {
    // RVC buildVoiceOutputSessionPayload 3051-3064.
    const created = await call(relay, 'POST', '/voice/output/session', { provider: 'offline', voice: 'en-us' }, { ...bearer(token), ...REMOTE });
    const session = sessionResponse(created.body);
    expect(session).toMatchObject({ resume_supported: true, resume_ttl_ms: 300_000, provider: 'offline' });
    expect(created.body.protocol).toBe('hermes.voice.output.v0');
    const v = new AppVoiceSocket(relay, session.websocket_path as string, bearer(token));
    const text = 'The relay keeps speaking while the phone changes networks. '.repeat(40);
    expect(
      await v.open((ws) => {
        ws.send('{"type":"session.start"}');
        ws.send(JSON.stringify({ type: 'response.create', tool_scaffold: false, text, render_mode: 'verbatim' }));
      }),
    ).toBe(101);
    await until(() => v.of('voice.audio.delta').length >= 5, 15_000, 'audio');
    await v.drop();
    expect(v.has('voice.response.done')).toBe(false);
    const dropped = { events: v.lastEventId, audio: v.lastAudioEventId };
    await until(() => readEvents(relay.home).some((e) => e.type === 'voice.session_detached' && e.data.sessionId === session.session_id));
    expect(await v.resume(session.resume_token as string)).toBe(101);
    await until(() => v.has('voice.response.done') || v.has('voice.error') || v.has('voice.session.resume_failed'), 30_000, 'the end');
    const after = v.frames.slice(v.frames.findIndex((f) => f.type === 'voice.session.resumed'));
    expect(after[0]).toMatchObject({ type: 'voice.session.resumed', session_id: session.session_id, last_event_id: dropped.events });
    expect(after[1]).toMatchObject({ type: 'voice.replay.started', from_event_id: dropped.events });
    const done = after.findIndex((f) => f.type === 'voice.replay.done');
    expect(after.slice(2, done).every((f) => f.replayed === true && f.event_id > dropped.events)).toBe(true);
    expect(after[done].replay_event_count).toBe(done - 2);
    // The whole response, each frame once: audio ids 1..n without a hole, one done, bytes as its metrics say.
    const stream = streamOf(v.frames);
    const audio = stream.filter((f) => f.type === 'voice.audio.delta');
    expect(audio.map((f) => f.audio_event_id)).toEqual(audio.map((_, i) => i + 1));
    expect(audio.length).toBeGreaterThan(dropped.audio);
    expect(stream.filter((f) => f.type === 'voice.response.done')).toHaveLength(1);
    expect(stream.at(-1)!.metrics.bytes).toBe(audio.reduce((n, f) => n + f.byte_count, 0));
    // RVC 1015: on response.done the app closes 1000; the session ends then (no grace).
    v.ws.close(1000, 'done');
    await until(() => readEvents(relay.home).some((e) => e.type === 'voice.session_ended' && e.data.sessionId === session.session_id));
    expect(readEvents(relay.home).find((e) => e.type === 'voice.session_resumed' && e.data.sessionId === session.session_id)!.data).toMatchObject({
      fromEventId: dropped.events,
    });
    expect(JSON.stringify(readEvents(relay.home))).not.toContain(session.resume_token as string);
  });

  it("realtime agent (VoiceViewModel.kt 3623-3900): the agent's run and tool frames as hermes.*, a drop mid-run, the run finishes on the resumed socket", async () => {
    agent.hold = true;
    const created = await call(relay, 'POST', '/voice/realtime-agent/session', { chat_session_id: 'chat-9', sample_rate: 16000 }, bearer(token));
    const session = sessionResponse(created.body, 'RealtimeSessionResponse');
    expect(created.body).toMatchObject({ protocol: 'hermes.voice.realtime_agent.v0', broker_mode: 'fallback_engine' });
    const v = new AppVoiceSocket(relay, session.websocket_path as string, bearer(token));
    await v.open((ws) => ws.send('{"type":"session.start"}'));
    v.send({ type: 'response.create', tool_scaffold: false, text: 'what is the weather in Lisbon', render_mode: 'verbatim' });
    await until(() => v.has('hermes.tool.started'), 15_000, 'the tool');
    // The run's heartbeat: five seconds on the relay's clock with the tool still running.
    relay.clock.advance(5000);
    await relay.sweep();
    await until(() => v.of('hermes.run.progress').length >= 2, 15_000, 'progress');
    await v.drop();
    await until(() => readEvents(relay.home).some((e) => e.type === 'voice.session_detached' && e.data.sessionId === session.session_id));
    agent.release();
    expect(await v.resume(session.resume_token as string)).toBe(101);
    await until(() => v.has('voice.response.done') || v.has('voice.error'), 30_000, 'the answer');
    const stream = streamOf(v.frames);
    const types = stream.map((f) => f.type);
    // The frames and fields the view model reads, named as it matches them.
    expect(stream.find((f) => f.type === 'hermes.run.started')).toMatchObject({ chat_session_id: 'chat-9', run_id: expect.any(String) });
    expect(stream.find((f) => f.type === 'hermes.tool.started')).toMatchObject({
      tool_name: 'web_search',
      tool_call_id: 'call_1',
      message: 'weather in Lisbon',
    });
    const beat = stream.filter((f) => f.type === 'hermes.run.progress')[1];
    expect(beat).toMatchObject({ active_tool_name: 'web_search', completed_tool_count: 0, elapsed_ms: 5000, should_speak: false });
    expect(stream.find((f) => f.type === 'hermes.tool.completed')).toMatchObject({ tool_name: 'web_search', completed_tool_count: 1, success: true });
    expect(stream.filter((f) => f.type === 'hermes.run.progress').at(-1)).toMatchObject({ active_tool_name: null, completed_tool_count: 1 });
    expect(types.some((t) => t.startsWith('svc.'))).toBe(false);
    expect(stream.some((f) => f.tool_name === '_thinking')).toBe(false);
    expect(types.indexOf('hermes.tool.completed')).toBeLessThan(types.indexOf('voice.response.delta'));
    expect(stream.find((f) => f.type === 'voice.response.delta')).toMatchObject({
      delta: 'It is sunny in Lisbon.',
      source: 'hermes',
      delivery: 'final',
    });
    expect(types.slice(-2)).toEqual(['voice.output_audio.done', 'voice.response.done']);
    // The agent API is the host's: it got its own header, whatever the relay's spelling.
    expect(agent.calls.at(-1)).toMatchObject({ session: 'chat-9', body: { stream: true } });
    v.ws.close(1000, 'done');
    agent.hold = false;
  });
});
