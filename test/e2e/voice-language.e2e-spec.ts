import { execFileSync } from 'node:child_process';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { bearer, pairPhone, readEvents, startRelay, type TestRelay } from '../support/harness';
import { call, type Json } from '../support/http';
import { AppVoiceSocket, until } from '../support/voice-client';

/**
 * The language a voice output session speaks (issue 35.5). The app sends `language` when it starts one
 * (RelayVoiceClient.kt 3049-3063 `buildVoiceOutputSessionPayload`: a provider's language code, or whatever
 * was typed in the screen's language field, VoiceSettingsScreen.kt 1657-1663, so "de", "de-DE" or "German"),
 * and saves it in the voice output settings; the reference passes the session's language to its provider
 * (plugin/relay/voice_output.py 759). Here espeak-ng speaks it with its voice for that language (its own list,
 * `espeak-ng --voices`); a language no voice speaks is refused before a session is made.
 */
jest.setTimeout(60_000);

const NO_CLOUD = { VOICE_TOOLS_OPENAI_KEY: '', OPENAI_API_KEY: '' };
const GERMAN = 'Guten Morgen, wie geht es dir heute?';

/** What espeak-ng says when run directly: its WAV without the 44-byte header (the PCM the session streams). */
const espeak = (voice: string, text: string): Buffer => execFileSync('espeak-ng', ['-v', voice, '--stdout'], { input: text }).subarray(44);

describe('voice output speaks the language the app asks for (offline provider, espeak-ng)', () => {
  let relay: TestRelay;
  let token: string;
  beforeAll(async () => {
    relay = await startRelay({ env: NO_CLOUD });
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
  });
  afterAll(() => relay.close());

  /** An output session made with `body`, `text` spoken on it as the app asks: the PCM it streamed, and the creation's answer. */
  async function spoken(body: Json, text = GERMAN): Promise<{ pcm: Buffer; created: Json }> {
    const created = await call(relay, 'POST', '/voice/output/session', body, bearer(token));
    expect(created.status).toBe(200);
    const v = new AppVoiceSocket(relay, created.body.websocket_path as string, bearer(token));
    expect(
      await v.open((ws) => {
        ws.send('{"type":"session.start"}');
        ws.send(JSON.stringify({ type: 'response.create', tool_scaffold: false, text, render_mode: 'verbatim' }));
      }),
    ).toBe(101);
    await until(() => v.has('voice.response.done') || v.has('voice.error'), 30_000, 'the speech');
    expect(v.of('voice.error')).toEqual([]);
    v.ws.close(1000, 'done');
    return { pcm: Buffer.concat(v.of('voice.audio.delta').map((f) => Buffer.from(f.audio_base64 as string, 'base64'))), created: created.body };
  }

  it('language de-DE (as the app sends it) speaks German: the audio is espeak-ng -v de’s own, not the English voice’s', async () => {
    const { pcm, created } = await spoken({ provider: 'offline', voice: 'en-us', language: 'de-DE' });
    expect(created.language).toBe('de');
    expect(pcm.length).toBeGreaterThan(20_000);
    expect(pcm.equals(espeak('de', GERMAN))).toBe(true);
    expect(pcm.equals(espeak('en-us', GERMAN))).toBe(false);
  });

  it('the voice’s variant stays (en-us+f3 in German is de+f3); a voice that already speaks the language is kept (en-gb for en)', async () => {
    expect((await spoken({ voice: 'en-us+f3', language: 'de' })).pcm.equals(espeak('de+f3', GERMAN))).toBe(true);
    const english = 'Good morning, how are you today?';
    expect((await spoken({ voice: 'en-gb', language: 'en' }, english)).pcm.equals(espeak('en-gb', english))).toBe(true);
  });

  it('a language espeak-ng cannot speak is refused before a session is made: 400 voice.language_unavailable, nothing written', async () => {
    const before = readEvents(relay.home).filter((e) => e.type === 'voice.session_created').length;
    for (const language of ['xx-YY', 'Klingon', 'de;rm -rf /', '../../etc/passwd']) {
      const r = await call(relay, 'POST', '/voice/output/session', { language }, bearer(token));
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ ok: false, success: false, code: 'voice.language_unavailable' });
      expect(r.body.error).toMatch(/^the offline provider \(espeak-ng\) has no voice for the language ".*"/);
      // The app's error classifier reads "400 ... unsupported ... field" as "update the relay" (RelayErrorClassifier.kt 145-153).
      expect(JSON.stringify(r.body)).not.toMatch(/field/);
    }
    expect(readEvents(relay.home).filter((e) => e.type === 'voice.session_created')).toHaveLength(before);
  });

  it('the saved setting applies when the app sends none (PATCH /voice/output/config {language}), a sent one wins over it', async () => {
    const patched = await call(relay, 'PATCH', '/voice/output/config', { language: 'de' }, bearer(token));
    expect(patched.status).toBe(200);
    try {
      expect((await spoken({})).pcm.equals(espeak('de', GERMAN))).toBe(true);
      const english = 'Good morning, how are you today?';
      expect((await spoken({ language: 'en-US' }, english)).pcm.equals(espeak('en-us', english))).toBe(true);
    } finally {
      expect((await call(relay, 'PATCH', '/voice/output/config', { language: null }, bearer(token))).status).toBe(200);
    }
    // With no language saved, the voice decides, as before (a profile's `voice: de` keeps speaking German).
    expect((await spoken({ voice: 'de' })).pcm.equals(espeak('de', GERMAN))).toBe(true);
  });

  it('the options list the languages the installed espeak-ng speaks; validate says which one it cannot', async () => {
    const o = await call(relay, 'GET', '/voice/output/providers/offline/options', undefined, bearer(token));
    expect(o.body.languages).toEqual(expect.arrayContaining(['de', 'en-us', 'en-gb', 'pt-br', 'fr']));
    expect(o.body.languages.length).toBeGreaterThan(50);
    const ok = await call(relay, 'POST', '/voice/output/providers/offline/validate', { language: 'de-DE' }, bearer(token));
    expect(ok.body.checks.find((c: Json) => c.id === 'language_known')).toMatchObject({ status: 'ok' });
    const bad = await call(relay, 'POST', '/voice/output/providers/offline/validate', { language: 'xx' }, bearer(token));
    expect(bad.body).toMatchObject({ valid: false });
    expect(bad.body.checks.find((c: Json) => c.id === 'language_known')).toMatchObject({ status: 'error' });
  });

  it('/voice/synthesize takes the language too (the app’s enhanced overrides, RelayVoiceClient.kt 264-270)', async () => {
    const mp3 = (language: string) =>
      fetch(`${relay.url}/voice/synthesize`, {
        method: 'POST',
        headers: { ...bearer(token), 'content-type': 'application/json', accept: 'audio/mpeg' },
        body: JSON.stringify({ text: GERMAN, language }),
      });
    const de = await mp3('de');
    expect(de.status).toBe(200);
    const wav = execFileSync('espeak-ng', ['-v', 'de', '-s', '170', '--stdout'], { input: GERMAN });
    const expected = execFileSync('lame', ['--quiet', '-b', '64', '-', '-'], { input: wav });
    expect(Buffer.from(await de.arrayBuffer()).equals(expected)).toBe(true);
    const xx = await mp3('xx');
    expect(xx.status).toBe(400);
    expect(await xx.text()).toMatch(/voice\.language_unavailable/);
  });
});

describe('the OpenAI-compatible provider: a language it speaks is asked for, one it does not is refused', () => {
  let relay: TestRelay;
  let token: string;
  let server: http.Server;
  const speech: Json[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.url === '/v1/audio/speech') {
          speech.push(JSON.parse(Buffer.concat(chunks).toString()) as Json);
          res.setHeader('content-type', 'application/octet-stream');
          return res.end(Buffer.alloc(4800));
        }
        res.statusCode = 404;
        res.end('{}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    relay = await startRelay({ env: { OPENAI_API_KEY: 'sk-test-language-key', OPENAI_BASE_URL: base } });
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
  });
  afterAll(async () => {
    await relay.close();
    await new Promise((r) => server.close(r));
  });

  it('gpt-4o-mini-tts is told the language in its instructions (the speech API has no language parameter); xx is refused', async () => {
    const created = await call(relay, 'POST', '/voice/output/session', { provider: 'openai', language: 'pt-BR' }, bearer(token));
    expect(created.status).toBe(200);
    const v = new AppVoiceSocket(relay, created.body.websocket_path as string, bearer(token));
    expect(await v.open((ws) => ws.send(JSON.stringify({ type: 'response.create', text: 'Bom dia' })))).toBe(101);
    await until(() => v.has('voice.response.done') || v.has('voice.error'), 15_000, 'the speech');
    expect(v.of('voice.error')).toEqual([]);
    v.ws.close(1000);
    expect(speech.at(-1)).toMatchObject({ model: 'gpt-4o-mini-tts', input: 'Bom dia', instructions: 'Speak in Portuguese (Brazil).' });
    const refused = await call(relay, 'POST', '/voice/output/session', { provider: 'openai', language: 'xx' }, bearer(token));
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'voice.language_unavailable' });
  });
});
