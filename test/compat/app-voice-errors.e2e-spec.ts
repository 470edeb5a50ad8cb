import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { bearer, pairPhone, type TestRelay } from '../support/harness';
import { call, type Json } from '../support/http';
import { AppVoiceSocket, streamOf, until } from '../support/voice-client';
import { startRelay } from './client-relay';

/**
 * Voice errors as the app shows them (RVC = Codename-11/hermes-relay
 * app/src/main/kotlin/com/hermesandroid/relay/network/relay/RelayVoiceClient.kt).
 * - Socket frames: parseRealtimeEvent shows `message`, else `error`, else `reason` (RVC:2974-2980); a
 *   `voice.error` or `resume_failed` ends the turn with it (RVC:1020-1022, 1919-1939; VoiceViewModel.kt 4009-4025).
 * - HTTP: no field is read. describeHttpError (RVC:2657-2674, written for the reference relay's `text/plain`
 *   refusals, plugin/relay/voice_auth.py 69-223) shows a fallback per status and then the body, whatever it is,
 *   cut to 240 characters. On `/voice/synthesize` the app asks `Accept: audio/mpeg` (RVC:279-283), so a JSON
 *   refusal there reached the user as raw JSON: the one place. Refusals to a client that takes no JSON are now
 *   one text line, `<sentence> (<code>)`; a client that takes JSON (no Accept, `*\/*`, application/json) still
 *   gets `{ok: false, error, code}`.
 */
jest.setTimeout(60_000);

/** RVC:2657-2674, line for line. */
function describeHttpError(code: number, message: string, body = ''): string {
  const trimmed = body.trim().slice(0, 240);
  const fallback =
    code === 401
      ? 'Voice auth failed — re-pair to refresh the session'
      : code === 403
        ? 'Voice access denied — re-pair to restore voice grants'
        : code === 404
          ? 'Voice endpoint not available on this relay'
          : code === 413
            ? 'Audio too large for relay'
            : code === 503
              ? 'Voice provider unavailable (check relay config)'
              : code >= 500 && code <= 599
                ? `Relay error (HTTP ${code})`
                : `HTTP ${code}: ${message.trim() === '' ? 'request failed' : message}`;
  return trimmed !== '' ? `${fallback} (${trimmed})` : fallback;
}

/** RelayErrorClassifier.kt 145-153: "400" with "unsupported" and "field" reads as "update the relay". */
const saysUpdateTheRelay = (shown: string) => ['400', 'unsupported', 'field'].every((w) => shown.toLowerCase().includes(w));

describe('compat: voice errors read as the app reads them', () => {
  let relay: TestRelay;
  let token: string;
  let agentApi: http.Server;
  beforeAll(async () => {
    // The agent host's API answering an error the way OpenAI-compatible servers do: JSON with error.message.
    agentApi = http.createServer((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'model overloaded, try again', type: 'server_error', code: null } }));
    });
    await new Promise<void>((r) => agentApi.listen(0, '127.0.0.1', r));
    relay = await startRelay({
      env: {
        VOICE_TOOLS_OPENAI_KEY: '',
        OPENAI_API_KEY: '',
        RELAY_REALTIME_VOICE_ENABLED: '1',
        API_SERVER_KEY: 'k'.repeat(32),
        RELAY_WEBAPI_URL: `http://127.0.0.1:${(agentApi.address() as AddressInfo).port}`,
      },
    });
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
  });
  afterAll(async () => {
    await relay.close();
    await new Promise((r) => agentApi.close(r));
  });

  /** POST /voice/synthesize as the app sends it (RVC:247-283). */
  const synthesize = (body: Json, headers: Record<string, string> = bearer(token)) =>
    fetch(`${relay.url}/voice/synthesize`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', accept: 'audio/mpeg' },
      body: JSON.stringify(body),
    });

  it('a /voice/synthesize refusal (Accept: audio/mpeg) is one line of text with its code: the app shows a sentence, not JSON', async () => {
    const cases: Array<[Json, Record<string, string>, number, RegExp]> = [
      [{ text: '' }, bearer(token), 400, /^'text' must not be empty \(validation_failed\)$/],
      [
        { text: 'Hallo', language: 'xx' },
        bearer(token),
        400,
        /^the offline provider \(espeak-ng\) has no voice for the language "xx".* \(voice\.language_unavailable\)$/,
      ],
      [{ text: 'x'.repeat(5001) }, bearer(token), 400, /^text exceeds 5000 characters.* \(voice\.text_too_long\)$/],
      [{ text: 'Hallo' }, bearer('not-a-session-token-at-all'), 401, /\(auth\.invalid_token\)$/],
    ];
    for (const [body, headers, status, line] of cases) {
      const res = await synthesize(body, headers);
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      const text = await res.text();
      expect(text.trim()).toMatch(line);
      const shown = describeHttpError(res.status, res.statusText, text);
      expect(shown).not.toMatch(/[{}"]ok"|\{"/);
      expect(saysUpdateTheRelay(shown)).toBe(false);
    }
  });

  it('the same refusal to a client that takes JSON (no Accept, */*, application/json) keeps {ok: false, error, code}', async () => {
    for (const accept of [undefined, '*/*', 'application/json', 'audio/mpeg, application/json;q=0.5']) {
      const res = await fetch(`${relay.url}/voice/synthesize`, {
        method: 'POST',
        headers: { ...bearer(token), 'content-type': 'application/json', ...(accept ? { accept } : {}) },
        body: JSON.stringify({ text: '' }),
      });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toMatchObject({ ok: false, success: false, code: 'validation_failed' });
    }
  });

  it('a language no provider voice speaks, on POST /voice/output/session (Accept: application/json, RVC:2805-2809), leads with a readable status line', async () => {
    const res = await fetch(`${relay.url}/voice/output/session`, {
      method: 'POST',
      headers: { ...bearer(token), 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ language: 'xx-YY' }),
    });
    expect(res.status).toBe(400);
    expect(res.statusText).toBe('Language not spoken here: xx-YY');
    const shown = describeHttpError(res.status, res.statusText, await res.text());
    expect(shown).toMatch(/^HTTP 400: Language not spoken here: xx-YY \(/);
    expect(saysUpdateTheRelay(shown)).toBe(false);
  });

  it("the agent API's JSON error reaches the app as its sentence in voice.error and hermes.run.failed, never as JSON", async () => {
    const created = await call(relay, 'POST', '/voice/realtime-agent/session', { chat_session_id: 'chat-err' }, bearer(token));
    expect(created.status).toBe(200);
    const v = new AppVoiceSocket(relay, created.body.websocket_path as string, bearer(token));
    expect(await v.open((ws) => ws.send('{"type":"session.start"}'))).toBe(101);
    v.send({ type: 'response.create', tool_scaffold: false, text: 'hello', render_mode: 'verbatim' });
    await until(() => v.has('voice.error'), 15_000, 'the error');
    const stream = streamOf(v.frames);
    const shown = [stream.find((f) => f.type === 'voice.error')!, stream.find((f) => f.type === 'hermes.run.failed')!].map(
      (f) => f.message ?? f.error ?? f.reason,
    );
    expect(shown).toEqual(['the agent API answered 500: model overloaded, try again', 'the agent API answered 500: model overloaded, try again']);
    expect(stream.find((f) => f.type === 'voice.error')).toMatchObject({ code: 'voice.agent_error' });
    v.ws.close(1000);
  });
});
