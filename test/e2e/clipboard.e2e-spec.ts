import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { bearer, pairPhone, readEvents, startRelay, type TestRelay } from '../support/harness';
import { call, REMOTE, operatorFetch } from '../support/http';

/** Every request here is the operator's tool's: with the home's operator key (test/support/http.ts). */
const fetch = operatorFetch;

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('rest of a tiny png')]);
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from('jfif')]);
const GIF = Buffer.from('GIF89a tiny');
const WEBP = Buffer.concat([Buffer.from('RIFF'), Buffer.from([1, 0, 0, 0]), Buffer.from('WEBPVP8 ')]);
const MB = 1024 * 1024;

function sized(n: number): Buffer {
  const b = Buffer.alloc(n, 7);
  PNG.copy(b, 0, 0, 8);
  return b;
}

async function latest(
  relay: TestRelay,
  headers: Record<string, string> = {},
): Promise<{ status: number; type: string | null; sha256: string | null; bytes: Buffer }> {
  const res = await fetch(`${relay.url}/clipboard/inbox/latest`, { headers });
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    sha256: res.headers.get('x-clipboard-sha256'),
    bytes: Buffer.from(await res.arrayBuffer()),
  };
}

describe('clipboard inbox', () => {
  let relay: TestRelay;
  let token: string;
  let stage: (body: Record<string, unknown>) => ReturnType<typeof call>;
  beforeAll(async () => {
    relay = await startRelay();
    const paired = await pairPhone(relay, { terms: { grants: { chat: false } } });
    paired.phone.close();
    token = paired.token;
    stage = (body) => call(relay, 'POST', '/clipboard/inbox', body, bearer(token));
  });
  afterAll(() => relay?.close());
  afterEach(async () => {
    await call(relay, 'DELETE', '/clipboard/inbox');
  });

  it('stages an image as a 0600 file in a 0700 inbox; the host reads it once', async () => {
    const r = await stage({ format: 'png', bytes_base64: PNG.toString('base64'), filename_hint: 'Screenshot 2026.png', unknown_field: 1 });
    expect(r.status).toBe(200);
    const inbox = path.join(relay.home, 'inbox');
    expect(r.body).toMatchObject({ ok: true, size_bytes: PNG.length, format: 'png' });
    expect(path.dirname(r.body.path)).toBe(inbox);
    expect(path.basename(r.body.path)).toMatch(/^[0-9a-f]{16}-Screenshot_2026\.png$/);
    expect(fs.readFileSync(r.body.path)).toEqual(PNG);
    expect(fs.statSync(r.body.path).mode & 0o777).toBe(0o600);
    expect(fs.statSync(inbox).mode & 0o777).toBe(0o700);

    const listed = await call(relay, 'GET', '/clipboard/inbox');
    expect(listed.body.entries).toHaveLength(1);
    expect(listed.body.entries[0]).toMatchObject({ id: r.body.id, path: r.body.path, size_bytes: PNG.length });

    const first = await latest(relay);
    expect(first.status).toBe(200);
    expect(first.type).toBe('image/png');
    expect(first.bytes).toEqual(PNG);
    expect(first.sha256).toBe(createHash('sha256').update(PNG).digest('hex'));
    expect(r.body.sha256).toBe(first.sha256);
    expect(fs.existsSync(r.body.path)).toBe(false);
    const second = await latest(relay);
    expect(second.status).toBe(404);
    expect(JSON.parse(second.bytes.toString())).toMatchObject({ ok: false, code: 'clipboard.empty_inbox' });
    const consumed = readEvents(relay.home).filter((e) => e.type === 'clipboard.consumed');
    expect(consumed.map((e) => e.data.entryId)).toContain(r.body.id);
  });

  it('accepts every format by its signature and refuses a mismatch, bad base64, empty bytes, an unknown format', async () => {
    for (const [format, bytes] of [
      ['png', PNG],
      ['jpeg', JPEG],
      ['jpg', JPEG],
      ['gif', GIF],
      ['webp', WEBP],
    ] as const) {
      const r = await stage({ format, bytes_base64: bytes.toString('base64') });
      expect([format, r.status]).toEqual([format, 200]);
    }
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ format: 'png', bytes_base64: JPEG.toString('base64') }, 'clipboard.magic_mismatch'],
      [{ format: 'webp', bytes_base64: Buffer.from('RIFF0000WAVEfmt ').toString('base64') }, 'clipboard.magic_mismatch'],
      [{ format: 'png', bytes_base64: 'not base64 at all!' }, 'clipboard.bad_base64'],
      [{ format: 'png', bytes_base64: '' }, 'clipboard.empty'],
      [{ format: 'bmp', bytes_base64: PNG.toString('base64') }, 'clipboard.bad_format'],
      [{ bytes_base64: PNG.toString('base64') }, 'clipboard.bad_format'],
      [{ format: 'png', bytes_base64: 42 }, 'clipboard.bad_base64'],
      [{ format: 'png', bytes_base64: PNG.toString('base64'), filename_hint: 7 }, 'clipboard.bad_filename_hint'],
    ];
    for (const [body, code] of cases) {
      const r = await stage(body);
      expect([code, r.status, r.body.code]).toEqual([code, 400, code]);
    }
  });

  it('words each refusal of the body as before: what is not an object, then each field in turn', async () => {
    const BODY = ['clipboard.bad_body', 'send a JSON object {format, bytes_base64, filename_hint?}'];
    const FORMAT = ['clipboard.bad_format', 'format must be one of png, jpeg, gif, webp'];
    const cases: Array<[unknown, string[]]> = [
      [null, BODY],
      [[{ format: 'png' }], BODY],
      ['png', BODY],
      [7, BODY],
      // Two fields wrong: the first one's code, every message (a refusal names all it found).
      [{}, ['clipboard.bad_format', 'format must be one of png, jpeg, gif, webp; bytes_base64 must be a base64 string']],
      [{ format: ['png'], bytes_base64: PNG.toString('base64') }, FORMAT],
      [{ format: 'png', bytes_base64: null }, ['clipboard.bad_base64', 'bytes_base64 must be a base64 string']],
      [
        { format: ' Image/PNG ', bytes_base64: PNG.toString('base64'), filename_hint: 'x'.repeat(256) },
        ['clipboard.bad_filename_hint', 'filename_hint must be a string of at most 255 characters'],
      ],
    ];
    for (const [body, [code, error]] of cases) {
      const r = await call(relay, 'POST', '/clipboard/inbox', body, bearer(token));
      expect([body, r.status, r.body]).toEqual([body, 400, { ok: false, code, error }]);
    }
    const ok = await stage({ format: ' Image/JPG ', bytes_base64: JPEG.toString('base64'), filename_hint: null });
    expect([ok.status, ok.body.format]).toEqual([200, 'jpeg']);
  });

  it('no filename_hint puts a file outside the inbox', async () => {
    const inbox = path.join(relay.home, 'inbox');
    for (const hint of [
      '../../../../tmp/evil.png',
      '/etc/passwd',
      '..\\..\\windows\\x.png',
      '..',
      '.hidden',
      'a/../../b',
      '\0bad',
      'x'.repeat(255),
    ]) {
      const r = await stage({ format: 'png', bytes_base64: PNG.toString('base64'), filename_hint: hint });
      expect(r.status).toBe(200);
      expect(path.dirname(r.body.path)).toBe(inbox);
      expect(path.basename(r.body.path)).toMatch(/^[0-9a-f]{16}(-[A-Za-z0-9][A-Za-z0-9._-]*)?\.png$/);
      expect(fs.existsSync(r.body.path)).toBe(true);
    }
  });

  it('a new image supersedes an unread one; images go stale after 5 minutes by the relay clock', async () => {
    const a = await stage({ format: 'png', bytes_base64: PNG.toString('base64') });
    const b = await stage({ format: 'gif', bytes_base64: GIF.toString('base64') });
    await relay.sweep();
    expect(fs.existsSync(a.body.path)).toBe(false);
    expect((await latest(relay)).bytes).toEqual(GIF);
    expect(fs.existsSync(b.body.path)).toBe(false);

    const c = await stage({ format: 'png', bytes_base64: PNG.toString('base64') });
    relay.clock.advanceSeconds(5 * 60 - 1);
    await relay.sweep();
    expect(fs.existsSync(c.body.path)).toBe(true);
    relay.clock.advanceSeconds(2);
    await relay.sweep();
    expect(fs.existsSync(c.body.path)).toBe(false);
    expect((await latest(relay)).status).toBe(404);
    expect(readEvents(relay.home).some((e) => e.type === 'clipboard.discarded' && e.data.entryId === c.body.id && e.data.reason === 'stale')).toBe(
      true,
    );
  });

  it('a host tool that takes the file itself counts as the read', async () => {
    const r = await stage({ format: 'png', bytes_base64: PNG.toString('base64') });
    fs.unlinkSync(r.body.path);
    expect((await latest(relay)).status).toBe(404);
    expect(readEvents(relay.home).some((e) => e.type === 'clipboard.discarded' && e.data.entryId === r.body.id && e.data.reason === 'missing')).toBe(
      true,
    );
  });

  it('takes up to 25 MB on this route (the global limit is 1 MiB) and refuses more with 413', async () => {
    const big = await stage({ format: 'png', bytes_base64: sized(2 * MB).toString('base64') });
    expect(big.status).toBe(200);
    const cap = await stage({ format: 'png', bytes_base64: sized(25 * MB).toString('base64') });
    expect(cap.status).toBe(200);
    expect(cap.body.size_bytes).toBe(25 * MB);
    const over = await stage({ format: 'png', bytes_base64: sized(25 * MB + 1).toString('base64') });
    expect(over.status).toBe(413);
    expect(over.body).toMatchObject({ ok: false, code: 'clipboard.too_large' });
    const wayOver = await stage({ format: 'png', bytes_base64: sized(27 * MB).toString('base64') });
    expect(wayOver.status).toBe(413);
    expect(wayOver.body).toMatchObject({ ok: false, code: 'body_too_large' });
    // Other routes keep the global limit.
    const other = await call(relay, 'POST', '/phone/replies', { text: 'x'.repeat(2 * MB) }, bearer(token));
    expect(other.status).toBe(413);
  }, 20_000);

  it('staging needs a paired bearer; reading and listing are loopback only', async () => {
    const body = { format: 'png', bytes_base64: PNG.toString('base64') };
    expect((await call(relay, 'POST', '/clipboard/inbox', body)).status).toBe(401);
    expect((await call(relay, 'POST', '/clipboard/inbox', body, { authorization: 'Bearer wrong-token-wrong-token' })).status).toBe(401);
    await stage(body);
    expect((await latest(relay, REMOTE)).status).toBe(403);
    expect((await latest(relay, { ...REMOTE, ...bearer(token) })).status).toBe(403);
    expect((await call(relay, 'GET', '/clipboard/inbox', undefined, { ...REMOTE, ...bearer(token) })).status).toBe(403);
    expect((await call(relay, 'DELETE', '/clipboard/inbox', undefined, REMOTE)).status).toBe(403);
    expect((await latest(relay)).status).toBe(200);
  });

  it('a staged image survives a restart within its 5 minutes; orphan files are cleaned', async () => {
    const r = await stage({ format: 'png', bytes_base64: PNG.toString('base64') });
    const orphan = path.join(relay.home, 'inbox', '0123456789abcdef.png');
    fs.writeFileSync(orphan, PNG, { mode: 0o600 });
    relay = await relay.restart();
    expect(fs.existsSync(orphan)).toBe(false);
    expect(fs.existsSync(r.body.path)).toBe(true);
    expect((await latest(relay)).bytes).toEqual(PNG);
  });
});
