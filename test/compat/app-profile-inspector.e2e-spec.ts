import * as fs from 'node:fs';
import * as path from 'node:path';
import { bearer, pairPhone, tempHome, type TestRelay } from '../support/harness';
import { REMOTE, type Json } from '../support/http';
import { startRelay } from './client-relay';

/**
 * The app's profile inspector over the relay (Codename-11/hermes-relay app/src/main/kotlin/com/hermesandroid/relay/,
 * `network/relay/RelayProfileInspectorClient.kt` RPIC, `data/ProfileInspectorModels.kt` PIM,
 * `viewmodel/ProfileInspectorViewModel.kt` PIVM, `ui/screens/ProfileInspectorScreen.kt` PIS). What the app does:
 * - it reads SOUL and memory (RPIC:96-102), shows a banner when `truncated` (PIS:850, 1406) and still lets
 *   the user edit: the draft starts from the content it was served (PIVM:150-152, 192-195);
 * - Save PUTs `{"content": draft}` with no If-Match (RPIC:116-133, 142-165, 213-218);
 * - a failure shows `reason` from RPIC:222-245: 400 the body's `detail`/`error`, 413 "Content too large —
 *   max 1024 KiB" (its 1 MiB ceiling, RPIC:66), and anything else unlisted (409, 412) as
 *   "HTTP <code>: <reason phrase>", so for a refusal only the status line's phrase reaches the user.
 * The decoders check each field the data class declares (kotlinx: a missing non-default field or a wrong
 * type fails the whole answer).
 */
jest.setTimeout(60_000);

/** RPIC:79-83's Json: unknown keys ignored; `truncated` defaults to false (PIM:83-93, 99-108). */
function decodeSoul(o: Json) {
  for (const [k, t] of [
    ['profile', 'string'],
    ['path', 'string'],
    ['content', 'string'],
    ['exists', 'boolean'],
    ['size_bytes', 'number'],
  ] as const)
    if (typeof o[k] !== t) throw new Error(`ProfileSoulResponse.${k}: expected ${t}, got ${JSON.stringify(o[k])}`);
  return { content: o.content as string, sizeBytes: o.size_bytes as number, truncated: o.truncated === true };
}
function decodeMemory(o: Json) {
  if (!Array.isArray(o.entries) || typeof o.total !== 'number' || typeof o.memories_dir !== 'string') throw new Error('ProfileMemoryResponse');
  return (o.entries as Json[]).map((e) => {
    for (const k of ['name', 'filename', 'path', 'content']) if (typeof e[k] !== 'string') throw new Error(`ProfileMemoryEntry.${k}`);
    if (typeof e.size_bytes !== 'number') throw new Error('ProfileMemoryEntry.size_bytes');
    return { filename: e.filename as string, content: e.content as string, sizeBytes: e.size_bytes as number, truncated: e.truncated === true };
  });
}
/** PIM:118-140: the write answers. */
function decodeWrite(o: Json, memory: boolean) {
  if (typeof o.ok !== 'boolean' || typeof o.profile !== 'string' || typeof o.path !== 'string' || typeof o.bytes_written !== 'number')
    throw new Error(`Profile*UpdateResponse: ${JSON.stringify(o)}`);
  if (memory && typeof o.filename !== 'string') throw new Error('ProfileMemoryUpdateResponse.filename');
  return o;
}

/** RPIC:222-245: what the user reads when a save fails. */
function appSaveReason(status: number, statusText: string, body: string): string {
  switch (status) {
    case 400: {
      let detail = body.slice(0, 120);
      try {
        const o = JSON.parse(body) as Json;
        detail = (typeof o.detail === 'string' ? o.detail : typeof o.error === 'string' ? o.error : null) ?? detail;
      } catch {
        /* the first 120 characters */
      }
      return `Invalid request: ${detail}`;
    }
    case 401:
    case 403:
      return 'Unauthorized — re-pair with the relay';
    case 404:
      return "Profile 'work' not found on relay";
    case 413:
      return 'Content too large — max 1024 KiB';
    default:
      return status >= 500 ? `Relay error (HTTP ${status})` : `HTTP ${status}: ${statusText || 'request failed'}`;
  }
}

/** `n` bytes of UTF-8 text with two- and four-byte characters and CRLF lines, cut on a character boundary. */
function textOf(n: number, seed: string): string {
  const line = `${seed} — ñandú 🙂 keeps the whole file\r\n`;
  let s = line.repeat(Math.ceil(n / Buffer.byteLength(line)) + 1);
  while (Buffer.byteLength(s) > n) s = s.slice(0, -1);
  return s.replace(/[\uD800-\uDBFF]$/, '');
}

describe('compat: the app edits SOUL and memory files through the relay without losing a byte', () => {
  let relay: TestRelay;
  let token: string;
  let work: string;
  beforeAll(async () => {
    const home = tempHome();
    work = path.join(home, 'profiles', 'work');
    fs.mkdirSync(path.join(work, 'memories'), { recursive: true });
    fs.writeFileSync(path.join(work, 'config.yaml'), 'description: Work\n');
    relay = await startRelay({ home });
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
  });
  afterAll(() => relay.close());

  /** RPIC:454-475 and 196-219: the app's GET and PUT, headers included. */
  const get = async (segment: string) => {
    const res = await fetch(`${relay.url}/api/profiles/work/${segment}`, { headers: { ...REMOTE, ...bearer(token), accept: 'application/json' } });
    return (await res.json()) as Json;
  };
  const save = async (segment: string, content: string) => {
    const res = await fetch(`${relay.url}/api/profiles/work/${segment}`, {
      method: 'PUT',
      headers: { ...REMOTE, ...bearer(token), accept: 'application/json', 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ content }),
    });
    const text = await res.text();
    return { status: res.status, statusText: res.statusText, text, body: JSON.parse(text) as Json };
  };

  it('a 100 KiB SOUL is served whole, saved back unchanged and edited, byte-exact', async () => {
    const original = textOf(100 * 1024, 'soul');
    fs.writeFileSync(path.join(work, 'SOUL.md'), original);
    const soul = decodeSoul(await get('soul'));
    expect(soul).toMatchObject({ truncated: false, sizeBytes: Buffer.byteLength(original) });
    expect(soul.content).toBe(original);

    const unchanged = await save('soul', soul.content);
    expect(unchanged.status).toBe(200);
    expect(decodeWrite(unchanged.body, false).bytes_written).toBe(Buffer.byteLength(original));
    expect(fs.readFileSync(path.join(work, 'SOUL.md')).equals(Buffer.from(original))).toBe(true);

    const edited = soul.content.replace('soul —', 'SOUL (edited on the phone) —') + 'One more line.\n';
    expect((await save('soul', edited)).status).toBe(200);
    expect(fs.readFileSync(path.join(work, 'SOUL.md')).equals(Buffer.from(edited))).toBe(true);
  });

  it('a 60 KiB memory file is served whole, saved back unchanged and edited, byte-exact', async () => {
    const original = textOf(60 * 1024, 'memory');
    fs.writeFileSync(path.join(work, 'memories', 'people notes.md'), original);
    const entry = decodeMemory(await get('memory')).find((e) => e.filename === 'people notes.md')!;
    expect(entry).toMatchObject({ truncated: false, sizeBytes: Buffer.byteLength(original) });
    expect(entry.content).toBe(original);

    // RPIC:155: URLEncoder.encode, `+` back to `%20`.
    const segment = `memory/${encodeURIComponent('people notes.md')}`;
    const unchanged = await save(segment, entry.content);
    expect(unchanged.status).toBe(200);
    expect(decodeWrite(unchanged.body, true)).toMatchObject({ filename: 'people notes.md', bytes_written: Buffer.byteLength(original) });
    expect(fs.readFileSync(path.join(work, 'memories', 'people notes.md')).equals(Buffer.from(original))).toBe(true);

    const edited = `Ana likes tea.\n${entry.content}`;
    expect((await save(segment, edited)).status).toBe(200);
    expect(fs.readFileSync(path.join(work, 'memories', 'people notes.md')).equals(Buffer.from(edited))).toBe(true);
  });

  it('takes a write up to the app’s 1 MiB ceiling (RPIC:66); past it 413, which the app names with that ceiling', async () => {
    const full = textOf(1024 * 1024, 'cap');
    expect((await save('soul', full)).status).toBe(200);
    expect(fs.readFileSync(path.join(work, 'SOUL.md')).equals(Buffer.from(full))).toBe(true);
    const soul = decodeSoul(await get('soul'));
    expect(soul.truncated).toBe(false);
    expect(soul.content).toBe(full);
    const over = await save('memory/big.md', 'x'.repeat(1024 * 1024 + 1));
    expect(over.status).toBe(413);
    expect(appSaveReason(over.status, over.statusText, over.text)).toBe('Content too large — max 1024 KiB');
    expect(fs.existsSync(path.join(work, 'memories', 'big.md'))).toBe(false);
  });
});

describe('compat: a file the relay showed only in part is never cut by the app’s save', () => {
  let relay: TestRelay;
  let token: string;
  let work: string;
  const soulBytes = textOf(100 * 1024, 'long soul');
  beforeAll(async () => {
    const home = tempHome();
    work = path.join(home, 'profiles', 'work');
    fs.mkdirSync(path.join(work, 'memories'), { recursive: true });
    fs.writeFileSync(path.join(work, 'config.yaml'), 'description: Work\n');
    fs.writeFileSync(path.join(work, 'SOUL.md'), soulBytes);
    // Sorted by name: a.md and b.md fill the listing's budget, c.md is shown in part, d.md not at all.
    for (const [name, size] of [
      ['a.md', 20 * 1024],
      ['b.md', 20 * 1024],
      ['c.md', 20 * 1024],
      ['d.md', 1024],
    ] as const)
      fs.writeFileSync(path.join(work, 'memories', name), textOf(size, name));
    relay = await startRelay({
      home,
      env: { RELAY_PROFILE_SOUL_MAX_BYTES: String(64 * 1024), RELAY_PROFILE_MEMORY_LIST_MAX_BYTES: String(50 * 1024) },
    });
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
  });
  afterAll(() => relay.close());

  const get = async (segment: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${relay.url}/api/profiles/work/${segment}`, { headers: { ...REMOTE, ...bearer(token), ...headers } });
    return { etag: res.headers.get('etag'), body: (await res.json()) as Json };
  };
  const save = async (segment: string, content: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${relay.url}/api/profiles/work/${segment}`, {
      method: 'PUT',
      headers: { ...REMOTE, ...bearer(token), 'content-type': 'application/json; charset=utf-8', ...headers },
      body: JSON.stringify({ content }),
    });
    const text = await res.text();
    return { status: res.status, statusText: res.statusText, text, body: JSON.parse(text) as Json };
  };

  it('SOUL past the read cap: served in part; the app’s save of that draft is 409 with a phrase it shows; the file is untouched', async () => {
    const soul = decodeSoul((await get('soul')).body);
    expect(soul).toMatchObject({ truncated: true, sizeBytes: Buffer.byteLength(soulBytes) });
    // Cut on a character boundary, never into a U+FFFD.
    expect(soulBytes.startsWith(soul.content)).toBe(true);
    expect(Buffer.byteLength(soul.content)).toBeGreaterThan(64 * 1024 - 4);
    // The draft as served, and one edited shorter (a longer one is past the write cap: 413 before anything else).
    for (const draft of [soul.content, soul.content.slice(0, 1000) + 'edited\n']) {
      const r = await save('soul', draft);
      expect(r.status).toBe(409);
      expect(r.body).toMatchObject({
        ok: false,
        error: 'profile_shown_in_part',
        code: 'profile.shown_in_part',
        size_bytes: Buffer.byteLength(soulBytes),
      });
      expect(appSaveReason(r.status, r.statusText, r.text)).toBe('HTTP 409: SOUL.md was shown in part (too large); edit it on the host');
    }
    expect(fs.readFileSync(path.join(work, 'SOUL.md'), 'utf8')).toBe(soulBytes);
  });

  it('memory files past the listing’s budget: the one shown in part and the one not shown are refused blind; the whole ones save', async () => {
    const entries = decodeMemory((await get('memory')).body);
    expect(entries.map((e) => [e.filename, e.truncated])).toEqual([
      ['a.md', false],
      ['b.md', false],
      ['c.md', true],
      ['d.md', true],
    ]);
    for (const name of ['c.md', 'd.md']) {
      const before = fs.readFileSync(path.join(work, 'memories', name));
      const r = await save(`memory/${name}`, entries.find((e) => e.filename === name)!.content);
      expect(r.status).toBe(409);
      expect(appSaveReason(r.status, r.statusText, r.text)).toBe(`HTTP 409: memories/${name} was shown in part (too large); edit it on the host`);
      expect(fs.readFileSync(path.join(work, 'memories', name)).equals(before)).toBe(true);
    }
    const a = entries[0];
    expect((await save('memory/a.md', a.content + 'more\n')).status).toBe(200);
  });

  it('a writer that names the version it read (If-Match) takes the responsibility and may replace it', async () => {
    const { etag } = await get('soul');
    const r = await save('soul', 'Short now.\n', { 'if-match': etag! });
    expect(r.status).toBe(200);
    expect(fs.readFileSync(path.join(work, 'SOUL.md'), 'utf8')).toBe('Short now.\n');
  });
});

describe('compat: the default profile answers by the reference’s name too, `(default)` (plugin/profiles.py:42-51)', () => {
  let relay: TestRelay;
  let token: string;
  let home: string;
  beforeAll(async () => {
    home = tempHome();
    fs.writeFileSync(path.join(home, 'config.yaml'), 'description: Default\nplugins:\n  enabled: [svc-relay]\n');
    fs.writeFileSync(path.join(home, 'SOUL.md'), 'Default soul.\n');
    fs.mkdirSync(path.join(home, 'profiles', 'work'), { recursive: true });
    fs.writeFileSync(path.join(home, 'profiles', 'work', 'config.yaml'), 'description: Work\n');
    relay = await startRelay({ home });
    const p = await pairPhone(relay);
    p.phone.close();
    token = p.token;
  });
  afterAll(() => relay.close());

  /** DiagnosticsScreen.kt:210-212: the row named the session's profile, or `(default)` for the server default. */
  const diagnosticsState = (info: Json, sessionProfile: string | null): string => {
    const key = sessionProfile ?? '(default)';
    const row = (info.profiles as Json[]).find((p) => p.name === key);
    return typeof row?.relay_state === 'string' ? row.relay_state : 'not checked';
  };

  it('/relay/info lists `(default)` beside `default`, so the diagnostics screen finds the server default', async () => {
    const res = await fetch(`${relay.url}/relay/info`, { headers: { ...REMOTE, ...bearer(token) } });
    const info = (await res.json()) as Json;
    expect(info.profiles).toEqual([
      { name: 'default', relay_state: 'enabled' },
      { name: '(default)', relay_state: 'enabled', alias_of: 'default' },
      { name: 'work', relay_state: 'absent' },
    ]);
    expect(diagnosticsState(info, null)).toBe('enabled');
    expect(diagnosticsState(info, 'default')).toBe('enabled');
    expect(diagnosticsState(info, 'work')).toBe('absent');
  });

  it('the profile routes answer `(default)` as `default` (RPIC:194: URLEncoder leaves the parentheses percent-encoded)', async () => {
    for (const name of ['%28default%29', '(default)']) {
      const res = await fetch(`${relay.url}/api/profiles/${name}/soul`, { headers: { ...REMOTE, ...bearer(token) } });
      expect(res.status).toBe(200);
      expect(decodeSoul((await res.json()) as Json)).toMatchObject({ content: 'Default soul.\n', truncated: false });
    }
    const res = await fetch(`${relay.url}/api/profiles/%28default%29/config`, { headers: { ...REMOTE, ...bearer(token) } });
    expect(await res.json()).toMatchObject({ profile: 'default', config: { description: 'Default' } });
  });
});
