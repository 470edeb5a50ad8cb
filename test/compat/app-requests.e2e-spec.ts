import * as fs from 'node:fs';
import * as path from 'node:path';
import { bearer, pairPhone, tempHome, type TestRelay } from '../support/harness';
import { REMOTE, type Json } from '../support/http';
import { startRelay } from './client-relay';

/**
 * Every HTTP request the phone app sends to the relay, in its smallest form: what it sends when each
 * optional field holds its default (issue 35, item 2; the audit's table is in docs/COMPATIBILITY.md, "What
 * the app leaves out"). Sources: Codename-11/hermes-relay app/src/main/kotlin/com/hermesandroid/relay/
 * network/relay/RelayHttpClient.kt (RHC), RelayVoiceClient.kt (RVC), RelayProfileInspectorClient.kt (RPIC),
 * accessibility/ScreenCapture.kt (SC).
 *
 * The one typed request body, `ModelCapabilitiesRequest` (RHC:717-723), is encoded by RHC:71-76's Json:
 * no `encodeDefaults`, so a property equal to its default is left out, and `explicitNulls = false`, so a
 * null is left out too. `kotlinx()` below does exactly that. The other bodies are built by hand
 * (`buildJsonObject`), each optional field `put` only when it holds something: their smallest form is
 * written out as the app builds it, with the lines.
 */
jest.setTimeout(60_000);

type Prop = { value: unknown; default?: unknown };
/** A data class as kotlinx writes it with encodeDefaults = false and explicitNulls = false. */
function kotlinx(props: Record<string, Prop>): string {
  const out: Record<string, unknown> = {};
  for (const [k, p] of Object.entries(props)) {
    if (p.value === null) continue;
    if ('default' in p && JSON.stringify(p.value) === JSON.stringify(p.default)) continue;
    out[k] = p.value;
  }
  return JSON.stringify(out);
}

/** RHC:717-723 `ModelCapabilitiesRequest(schemaVersion: Int = 1, profile: String? = null, refresh: Boolean = false, models)`. */
const modelCapabilitiesRequest = (models: Array<{ provider: string; model: string }>, profile: string | null = null, refresh = false) =>
  kotlinx({
    schema_version: { value: 1, default: 1 },
    profile: { value: profile, default: null },
    refresh: { value: refresh, default: false },
    models: { value: models },
  });

describe('compat: each request the app sends, with every default left out, is taken', () => {
  let relay: TestRelay;
  let token: string;
  let prefix: string;
  beforeAll(async () => {
    const home = tempHome();
    fs.writeFileSync(path.join(home, 'config.yaml'), 'description: Default\n');
    fs.mkdirSync(path.join(home, 'profiles', 'work'), { recursive: true });
    fs.writeFileSync(path.join(home, 'profiles', 'work', 'config.yaml'), 'description: Work\n');
    fs.mkdirSync(path.join(home, 'workspace'), { recursive: true });
    fs.writeFileSync(path.join(home, 'workspace', 'note.txt'), 'hello');
    relay = await startRelay({ home, env: { VOICE_TOOLS_OPENAI_KEY: '', OPENAI_API_KEY: '', RELAY_REALTIME_VOICE_ENABLED: '1' } });
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
    prefix = p.prefix;
  });
  afterAll(() => relay.close());

  it('kotlinx leaves schema_version, a null profile and refresh: false out of ModelCapabilitiesRequest', () => {
    expect(modelCapabilitiesRequest([{ provider: 'openai', model: 'gpt-5' }])).toBe('{"models":[{"provider":"openai","model":"gpt-5"}]}');
    expect(modelCapabilitiesRequest([{ provider: 'p', model: 'm' }], 'work', true)).toBe(
      '{"profile":"work","refresh":true,"models":[{"provider":"p","model":"m"}]}',
    );
  });

  it('sends each request in its smallest form and gets the answer the app reads, never a 400', async () => {
    const send = async (method: string, route: string, body?: string, contentType = 'application/json; charset=utf-8') => {
      const res = await fetch(`${relay.url}${route}`, {
        method,
        headers: { ...REMOTE, ...bearer(token), accept: 'application/json', ...(body !== undefined ? { 'content-type': contentType } : {}) },
        body,
      });
      const text = await res.text();
      let json: Json = {};
      try {
        json = JSON.parse(text) as Json;
      } catch {
        /* not JSON (audio, an image) */
      }
      return { status: res.status, body: json };
    };
    const screenshot = new FormData();
    screenshot.append('file', new Blob([Buffer.from('89504e470d0a1a0a0000', 'hex')], { type: 'image/png' }), 'hermes-screenshot-1.png');
    const multipart = async (route: string, form: FormData) => {
      const res = await fetch(`${relay.url}${route}`, { method: 'POST', headers: { ...REMOTE, ...bearer(token) }, body: form });
      return { status: res.status, body: (await res.json()) as Json };
    };
    const pair = { provider: 'openai', model: 'gpt-5' };

    const got: Array<[string, number]> = [];
    const record = async (name: string, r: Promise<{ status: number; body: Json }>) => {
      const { status, body } = await r;
      got.push([name, status]);
      return body;
    };

    // RHC:774-810: the reasoning overlay, as the app sends it for the server default and for a chosen profile.
    const caps = await record('model-capabilities, defaults left out', send('POST', '/relay/model-capabilities', modelCapabilitiesRequest([pair])));
    await record(
      'model-capabilities, profile and refresh',
      send('POST', '/relay/model-capabilities', modelCapabilitiesRequest([pair], 'work', true)),
    );
    // RHC:69-70, 781-784: providers to 128 characters, models to 512.
    await record(
      'model-capabilities, a 512-character model',
      send('POST', '/relay/model-capabilities', modelCapabilitiesRequest([{ provider: 'p'.repeat(128), model: 'm'.repeat(512) }])),
    );
    // RHC:1081-1140: one of ttl_seconds and grants, hand-built.
    await record('PATCH session, ttl only', send('PATCH', `/sessions/${prefix}`, '{"ttl_seconds":86400}'));
    await record('PATCH session, grants only', send('PATCH', `/sessions/${prefix}`, '{"grants":{"terminal":3600}}'));
    // RHC:189-194: all three always; `since` is Kotlin's Double.toString.
    await record('image activity', send('GET', '/chat/image-activity?profile=default&session_id=s-1&since=1.7726E9'));
    // RHC:353-361: content_type only with a hint.
    await record('media by path, no hint', send('GET', `/media/by-path?path=${encodeURIComponent(path.join(relay.home, 'workspace', 'note.txt'))}`));
    // RHC:446-451: `default` when no profile is chosen.
    await record('profile avatar, none set', send('GET', '/api/profiles/default/avatar'));
    // RPIC:120-133: `{content}`, no If-Match.
    await record('PUT soul', send('PUT', '/api/profiles/work/soul', '{"content":""}'));
    await record('PUT memory file', send('PUT', '/api/profiles/work/memory/notes.md', '{"content":"x"}'));
    // RPIC:353-391: the skill toggle's probe. No such route here: 404, which the probe reads as "not supported"
    // and the toggle is greyed, as the reference's 501 stub does (RPIC:374-380).
    await record('skill toggle probe (OPTIONS)', send('OPTIONS', '/api/skills/toggle'));
    // SC:561-569: one `file` part.
    await record('media upload (multipart)', multipart('/media/upload', screenshot));
    // RVC:263-275: `{text}` and nothing else without overrides or a profile; RVC:2644-2649 adds `?profile=` only with one.
    await record('voice synthesize', send('POST', '/voice/synthesize', '{"text":"Hello"}'));
    for (const section of ['output', 'realtime', 'realtime-agent'])
      await record(`voice ${section} config`, send('GET', section === 'output' ? '/voice/output/config' : `/voice/${section}/config`));
    await record('voice config', send('GET', '/voice/config'));
    // RVC:455-460, 731-738, 2535-2540: model, voice, sample_rate always; language (output) only when set.
    await record(
      'voice output validate',
      send('POST', '/voice/output/providers/openai/validate', '{"model":"gpt-4o-mini-tts","voice":"alloy","sample_rate":24000}'),
    );
    await record(
      'voice realtime validate',
      send('POST', '/voice/realtime/providers/openai/validate', '{"model":"gpt-realtime","voice":"alloy","sample_rate":24000}'),
    );
    // RVC:501-513, 786-810, 2580-2592: each setting only when changed, one at a time from the screens. (RVC:604-614's
    // promotion settings are not sent: the screen shows them only with a `promotion` block, which this relay has not.)
    await record('voice output config PATCH', send('PATCH', '/voice/output/config', '{"enabled":true}'));
    await record('voice realtime config PATCH', send('PATCH', '/voice/realtime/config', '{"voice":"alloy"}'));
    await record('voice realtime-agent config PATCH', send('PATCH', '/voice/realtime-agent/config', '{"voice":"alloy"}'));
    // RVC:2677, 2713-2760, 3049-3063: with no profile and no overrides, an empty object.
    await record('voice realtime session', send('POST', '/voice/realtime/session', '{}'));
    await record('voice realtime-agent session', send('POST', '/voice/realtime-agent/session', '{}'));
    await record('voice output session', send('POST', '/voice/output/session', '{}'));

    expect(got).toEqual([
      ['model-capabilities, defaults left out', 200],
      ['model-capabilities, profile and refresh', 200],
      ['model-capabilities, a 512-character model', 200],
      ['PATCH session, ttl only', 200],
      ['PATCH session, grants only', 200],
      ['image activity', 200],
      ['media by path, no hint', 200],
      ['profile avatar, none set', 404],
      ['PUT soul', 200],
      ['PUT memory file', 200],
      ['skill toggle probe (OPTIONS)', 404],
      ['media upload (multipart)', 200],
      ['voice synthesize', 200],
      ['voice output config', 200],
      ['voice realtime config', 200],
      ['voice realtime-agent config', 200],
      ['voice config', 200],
      ['voice output validate', 200],
      ['voice realtime validate', 200],
      ['voice output config PATCH', 200],
      ['voice realtime config PATCH', 200],
      ['voice realtime-agent config PATCH', 200],
      ['voice realtime session', 200],
      ['voice realtime-agent session', 200],
      ['voice output session', 200],
    ]);
    // The overlay applies: the app keeps the answer only when its schema_version is 1 (RHC:818).
    expect(caps).toMatchObject({ schema_version: 1, capabilities: [{ provider: 'openai', model: 'gpt-5', source: 'provider-adapter' }] });
  });
});
